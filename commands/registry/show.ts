import {Flags} from '@oclif/core'
import {grid, tableStyle} from '../../src/cli/output.js'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {registryFlag} from '../../src/cli/flags.js'
import {formatUtcNow, parseTimestamp} from '../../src/json/timestamp.js'
import {
  type BindingRow,
  classifyEditFailure,
  describeBindings,
  isEmptyRegistry,
  parseRegistryBytes,
} from '../../src/signing/registry-edit.js'
import type {RegistrySnapshot} from '../../src/signing/registry-edit.js'

export default class RegistryShow extends MwpCommand {
  static summary = 'List the signing-key bindings of a registry with their status.'
  static description = `One row per logical binding (identical duplicate declarations folded): key ID, Principal, validFrom, the effective (earliest) validUntil and revokedAt, and the status at --at (default now): valid, expired, revoked or not-yet-valid. --json gives the structured list. --registry - reads stdin.

An invalid registry is refused (exit 1, with the reason; see \`mwp registry check\`); an unknown --key-id is exit 1 too.

${exitCodesHelp({rejected: 'the registry is not valid, or --key-id is unknown', environment: 'cannot read the registry file'})}`

  static examples = [
    '<%= config.bin %> registry show --registry registry.json',
    '<%= config.bin %> registry show --registry registry.json --key-id urn:example:key:alice-1 --json',
  ]

  static flags = {
    registry: registryFlag,
    'key-id': Flags.string({description: 'Show only this key ID.'}),
    at: Flags.string({description: 'Instant for the status column (protocol timestamp). Default: now.'}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(RegistryShow)
    const at = flags.at ?? formatUtcNow()
    if (parseTimestamp(at) === null) throw usage(`--at is not a protocol timestamp: ${JSON.stringify(at)}`)
    let rows: BindingRow[]
    let organizationId: string
    try {
      const snapshot = parseRegistryBytes(await this.readInput(flags.registry))
      rows = describeBindings(snapshot as RegistrySnapshot, at)
      organizationId = (snapshot as RegistrySnapshot).organizationId
      if (isEmptyRegistry(snapshot)) process.stderr.write('mwp: the registry has no bindings yet\n')
    } catch (e) {
      const f = classifyEditFailure(e)
      if (!f) throw e
      if (f.kind === 'environment') throw environment(f.message)
      return {
        status: 'rejected',
        code: 'AUTH_INVALID_SIGNATURE',
        text: `invalid registry (${f.reason}): ${f.message}`,
        extra: {refusal: {reason: f.reason, message: f.message}},
      }
    }
    if (flags['key-id'] !== undefined) {
      rows = rows.filter((r) => r.keyId === flags['key-id'])
      if (rows.length === 0) {
        const message = `key ID ${flags['key-id']} is not registered in ${flags.registry}`
        return {
          status: 'rejected',
          code: 'AUTH_INVALID_SIGNATURE',
          text: message,
          extra: {refusal: {reason: 'key-unknown', message}},
        }
      }
    }
    const table = grid(
      ['keyId', 'principal', 'validFrom', 'validUntil', 'revokedAt', `status at ${at}`],
      rows.map((r) => [
        r.keyId,
        `${r.principal.type} ${r.principal.id}`,
        r.validFrom,
        r.validUntil ?? '-',
        r.revokedAt ?? '-',
        r.status,
      ]),
      tableStyle(undefined),
      [0],
    )
    const text = `organization ${organizationId}: ${rows.length} binding${rows.length === 1 ? '' : 's'}\n${table}`
    return {status: 'ok', result: {organizationId, at, bindings: rows}, text}
  }
}
