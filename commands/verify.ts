import {Args, Flags} from '@oclif/core'
import {EXIT_CODES_HELP, MwpCommand, type Outcome, usage} from '../src/cli/base.js'
import {kindFlag, registryFlag} from '../src/cli/flags.js'
import type {DocumentKind} from '../src/signing/profiles.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {Rejection, type Verified, verify} from '../src/signing/verify.js'

interface Item {
  input: string
  bytes: Buffer
}

/** The facts a successful verification establishes, without the document itself. */
function facts(v: Verified) {
  return {
    kind: v.kind,
    organizationId: v.organizationId,
    keyId: v.keyId,
    principal: v.principal,
    protectedTime: v.protectedTime,
    signingHash: v.signingHash,
    keyInterval: v.keyInterval,
  }
}

function splitLines(bytes: Buffer, input: string): Item[] {
  const items: Item[] = []
  let start = 0
  let line = 0
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start)
    if (end === -1) end = bytes.length
    line++
    const chunk = bytes.subarray(start, end)
    if (chunk.some((b) => b !== 0x20 && b !== 0x09 && b !== 0x0d)) items.push({input: `${input}:${line}`, bytes: chunk})
    start = end + 1
  }
  return items
}

export default class Verify extends MwpCommand {
  static summary = 'Verify Signed Documents with the six-stage profile of spec §6.4.'
  static description = `Exit 0 when every document verifies; exit 1 when any is rejected, printing only the wire code (PROTOCOL_VIOLATION, SCHEMA_VALIDATION_FAILED or AUTH_INVALID_SIGNATURE). --explain adds the protected stage and reason, for the local operator only.

Several FILE arguments, or --ndjson with one document per line, verify many documents in one process (the registry is validated once).

${EXIT_CODES_HELP}`

  static examples = [
    '<%= config.bin %> verify --registry fixtures/registry.json fixtures/documents/command.json',
    '<%= config.bin %> sign --kind command --key fixtures/keys/coordinator.key.json draft.json | <%= config.bin %> verify --registry fixtures/registry.json -',
    'cat many.ndjson | <%= config.bin %> verify --ndjson --registry fixtures/registry.json --json -',
  ]

  static strict = false
  static args = {file: Args.string({description: 'Document file, or - for stdin.', required: true})}
  static flags = {
    kind: kindFlag(),
    registry: registryFlag,
    explain: Flags.boolean({description: 'Show the protected failure stage and reason (local operator only).', default: false}),
    ndjson: Flags.boolean({description: 'Each input holds one document per line.', default: false}),
  }

  protected async execute(): Promise<Outcome> {
    const {argv, flags} = await this.parse(Verify)
    const inputs = argv as string[]
    if (inputs.filter((i) => i === '-').length > 1) throw usage('stdin (-) can be given only once')
    const evidence = RegistryEvidence.fromBytes(await this.readInput(flags.registry))
    const items: Item[] = []
    for (const input of inputs) {
      const bytes = await this.readInput(input)
      items.push(...(flags.ndjson ? splitLines(bytes, input) : [{input, bytes}]))
    }
    const kind = flags.kind as DocumentKind | undefined
    const results = items.map((item) => ({input: item.input, result: verify(kind, item.bytes, evidence)}))

    const describe = (r: Rejection) => (flags.explain ? {code: r.code, diagnostic: Rejection.diagnostic(r)} : {code: r.code})
    const explainLines = (r: Rejection): string => {
      const d = Rejection.diagnostic(r)
      return `${r.code}\n  stage: ${d.stage}\n  reason: ${d.reason}${d.detail ? `\n  detail: ${d.detail}` : ''}`
    }

    // One document: its facts or its wire code.
    if (results.length === 1 && !flags.ndjson) {
      const {result} = results[0]
      if (result.ok) {
        const f = facts(result)
        return {status: 'ok', result: f, text: `verified ${f.kind} signed by ${f.principal.type} ${f.principal.id}\n  key: ${f.keyId}\n  protected time: ${f.protectedTime}\n  signing hash: ${f.signingHash}`}
      }
      return {status: 'rejected', code: result.code, text: flags.explain ? explainLines(result) : result.code, extra: flags.explain ? {diagnostic: Rejection.diagnostic(result)} : undefined}
    }

    // Batch: one line (or one JSON entry) per document.
    const rejected = results.filter((r) => !r.result.ok)
    const documents = results.map(({input, result}) => (result.ok ? {input, status: 'verified', ...facts(result)} : {input, status: 'rejected', ...describe(result)}))
    const text = results
      .map(({input, result}) => (result.ok ? `${input}: verified ${result.kind} ${result.signingHash}` : `${input}: ${flags.explain ? explainLines(result).replace(/\n/g, '\n    ') : result.code}`))
      .join('\n')
    const summary = {total: results.length, verified: results.length - rejected.length, rejected: rejected.length, documents}
    if (rejected.length === 0) return {status: 'ok', result: summary, text}
    return {status: 'rejected', code: (rejected[0].result as Rejection).code, text, extra: {result: summary}}
  }
}
