import {Args, Flags} from '@oclif/core'
import {exitCodesHelp, MwpCommand, type Outcome, usage} from '../../src/cli/base.js'
import {parseTimestamp} from '../../src/json/timestamp.js'
import {
  type RegistryCheck,
  RegistryEditError,
  checkRegistry,
  parseRegistryBytes,
} from '../../src/signing/registry-edit.js'

export default class RegistryCheckCommand extends MwpCommand {
  static summary = 'Lint a registry snapshot: would it be accepted as Registry evidence?'
  static description = `Runs the same Registry-evidence validation as stage 4 of \`mwp verify\` over the whole snapshot (strict JSON, identifiers, strict Ed25519 public keys, key-ID uniqueness and immutable bindings, no public-key reuse or alias, append-only validity history) and reports:
  error    the reason the snapshot would be refused (exit 1); an empty registry is registry-empty
  warning  keys already expired or revoked, keys that are never valid, history records with neither boundary
  info     identical duplicate declarations (allowed), keys not yet valid, retroactive or repeated boundaries

Exit 0 when the snapshot is valid, warnings included. FILE defaults to $MWP_REGISTRY; - reads stdin.

${exitCodesHelp({rejected: 'the snapshot is not valid Registry evidence (the reason is printed)', environment: 'cannot read FILE or standard input'})}`

  static examples = [
    '<%= config.bin %> registry check registry.json',
    'cat registry.json | <%= config.bin %> registry check - --json',
  ]

  static args = {file: Args.string({description: 'Registry snapshot file, or - for stdin. Default: $MWP_REGISTRY.'})}
  static flags = {
    at: Flags.string({
      description: 'Instant for the expired/revoked/not-yet-valid notes (protocol timestamp). Default: now.',
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(RegistryCheckCommand)
    const file = args.file ?? process.env.MWP_REGISTRY
    if (file === undefined || file === '') throw usage('give a registry FILE (or - for stdin), or set MWP_REGISTRY')
    if (flags.at !== undefined && parseTimestamp(flags.at) === null)
      throw usage(`--at is not a protocol timestamp: ${JSON.stringify(flags.at)}`)
    const bytes = await this.readInput(file)
    let report: RegistryCheck
    try {
      report = checkRegistry(parseRegistryBytes(bytes), {at: flags.at})
    } catch (e) {
      if (!(e instanceof RegistryEditError) || !e.fault) throw e
      const detail = e.fault.detail ?? e.message
      report = {
        valid: false,
        organizationId: null,
        bindings: 0,
        fault: {reason: e.fault.reason, detail},
        findings: [{severity: 'error', code: e.fault.reason, message: detail}],
      }
    }
    const lines = report.findings.map((f) => `${f.severity.padEnd(7)} ${f.code}: ${f.message}`)
    const name = file === '-' ? 'stdin' : file
    if (report.valid) {
      const warnings = report.findings.filter((f) => f.severity === 'warning').length
      lines.unshift(
        `${name}: valid registry for ${report.organizationId} (${report.bindings} binding${report.bindings === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'})`,
      )
      return {status: 'ok', result: {file, ...report}, text: lines.join('\n')}
    }
    lines.unshift(`${name}: INVALID (${report.fault!.reason}) — would be refused as Registry evidence`)
    return {
      status: 'rejected',
      code: 'AUTH_INVALID_SIGNATURE',
      text: lines.join('\n'),
      extra: {result: {file, ...report}},
    }
  }
}
