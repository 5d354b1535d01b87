import {Args, Flags} from '@oclif/core'
import {replayPresented, verifyAudited} from '../src/admission/accept.js'
import {EXIT_CODES_HELP, MwpCommand, type Outcome, usage} from '../src/cli/base.js'
import {kindFlag, registryFlag, storeFlag} from '../src/cli/flags.js'
import {describeRejection, explainText, rejectionOutcome} from '../src/cli/rejections.js'
import {openConfiguredStore} from '../src/cli/store.js'
import type {DocumentKind} from '../src/signing/profiles.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {Rejection, type Verified, verify} from '../src/signing/verify.js'
import type {Store} from '../src/store/types.js'

interface Item {
  input: string
  bytes: Buffer
}

interface Checked {
  input: string
  result: Verified | Rejection
  /** Historical replay: the First-Admission Record that anchors the document. */
  anchor?: {admissionRecordId: string; trustedAcceptedAt: string}
}

/** The facts a successful verification establishes, without the document itself. */
function facts(v: Verified, anchor?: Checked['anchor']) {
  return {
    kind: v.kind,
    organizationId: v.organizationId,
    keyId: v.keyId,
    principal: v.principal,
    protectedTime: v.protectedTime,
    signingHash: v.signingHash,
    keyInterval: v.keyInterval,
    ...(anchor ? {admission: anchor} : {}),
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

--store records every failure in that store's protected audit log (mwp audit list). --historical replays documents admitted earlier (mwp admit): the registry given is the authoritative historical registry, and the document must be anchored by a valid First-Admission Record in the store, so it still verifies after a later expiry or revocation of its key.

${EXIT_CODES_HELP}`

  static examples = [
    '<%= config.bin %> verify --registry fixtures/registry.json fixtures/documents/command.json',
    '<%= config.bin %> sign --kind command --key fixtures/keys/coordinator.key.json fixtures/unsigned/command.json | <%= config.bin %> verify --registry fixtures/registry.json -',
    'cat many.ndjson | <%= config.bin %> verify --ndjson --registry fixtures/registry.json --json -',
    '<%= config.bin %> verify --historical --store sqlite:mwp.db --registry registry.json admitted.json',
  ]

  static strict = false
  static args = {file: Args.string({description: 'Document file, or - for stdin.', required: true})}
  static flags = {
    kind: kindFlag(),
    registry: registryFlag,
    explain: Flags.boolean({
      description: 'Show the protected failure stage and reason (local operator only).',
      default: false,
    }),
    ndjson: Flags.boolean({description: 'Each input holds one document per line.', default: false}),
    store: storeFlag,
    historical: Flags.boolean({
      description: 'Historical replay: require a valid First-Admission Record in --store.',
      default: false,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {argv, flags} = await this.parse(Verify)
    const inputs = argv as string[]
    if (inputs.filter((i) => i === '-').length > 1) throw usage('stdin (-) can be given only once')
    if (flags.historical && !flags.store)
      throw usage('--historical needs --store (the Admission Log holding the records)')
    const evidence = RegistryEvidence.fromBytes(await this.readInput(flags.registry))
    const items: Item[] = []
    for (const input of inputs) {
      const bytes = await this.readInput(input)
      items.push(...(flags.ndjson ? splitLines(bytes, input) : [{input, bytes}]))
    }
    const kind = flags.kind as DocumentKind | undefined
    const store = flags.store ? await openConfiguredStore(flags.store) : undefined
    let results: Checked[]
    try {
      results = await checkAll(items, kind, evidence, store, flags.historical)
    } finally {
      await store?.close()
    }

    // One document: its facts or its wire code.
    if (results.length === 1 && !flags.ndjson) {
      const {result, anchor} = results[0]
      if (!result.ok) return rejectionOutcome(result, flags.explain)
      const f = facts(result, anchor)
      const lines = [
        `verified ${f.kind} signed by ${f.principal.type} ${f.principal.id}`,
        `  key: ${f.keyId}`,
        `  protected time: ${f.protectedTime}`,
        `  signing hash: ${f.signingHash}`,
      ]
      if (anchor) lines.push(`  first admitted: ${anchor.trustedAcceptedAt} (${anchor.admissionRecordId})`)
      return {status: 'ok', result: f, text: lines.join('\n')}
    }

    // Batch: one line (or one JSON entry) per document.
    const rejected = results.filter((r) => !r.result.ok)
    const documents = results.map(({input, result, anchor}) =>
      result.ok
        ? {input, status: 'verified', ...facts(result, anchor)}
        : {input, status: 'rejected', ...describeRejection(result, flags.explain)},
    )
    const text = results
      .map(({input, result}) =>
        result.ok
          ? `${input}: verified ${result.kind} ${result.signingHash}`
          : `${input}: ${flags.explain ? explainText(result).replace(/\n/g, '\n    ') : result.code}`,
      )
      .join('\n')
    const summary = {
      total: results.length,
      verified: results.length - rejected.length,
      rejected: rejected.length,
      documents,
    }
    if (rejected.length === 0) return {status: 'ok', result: summary, text}
    return {status: 'rejected', code: (rejected[0].result as Rejection).code, text, extra: {result: summary}}
  }
}

async function checkAll(
  items: Item[],
  kind: DocumentKind | undefined,
  evidence: RegistryEvidence,
  store: Store | undefined,
  historical: boolean,
): Promise<Checked[]> {
  const out: Checked[] = []
  for (const item of items) {
    const presented = {bytes: item.bytes, kind, subject: item.input}
    if (!store) {
      out.push({input: item.input, result: verify(kind, item.bytes, evidence)})
    } else if (!historical) {
      out.push({input: item.input, result: await verifyAudited(presented, evidence, store)})
    } else {
      const r = await replayPresented(presented, evidence, store)
      if (r instanceof Rejection) out.push({input: item.input, result: r})
      else
        out.push({
          input: item.input,
          result: r.verified,
          anchor: {
            admissionRecordId: r.admission.record.admissionRecordId,
            trustedAcceptedAt: r.admission.record.trustedAcceptedAt,
          },
        })
    }
  }
  return out
}
