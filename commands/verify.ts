import {once} from 'node:events'
import {Args, Flags} from '@oclif/core'
import {replayPresented, verifyAudited} from '../src/admission/accept.js'
import {exitCodesHelp, MwpCommand, type Outcome, asFailure, readFailure, usage} from '../src/cli/base.js'
import {documentKindFlag, registryFlag, storeFlag} from '../src/cli/flags.js'
import {LineSplitter, inputStream, readCapped} from '../src/cli/input.js'
import {describeRejection, explainText, rejectionOutcome} from '../src/cli/rejections.js'
import {openConfiguredStore} from '../src/cli/store.js'
import {type MwpError, isErrorCode, protocolError} from '../src/errors.js'
import type {DocumentKind} from '../src/signing/profiles.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {MAX_DOCUMENT_BYTES, Rejection, type Verified, verify} from '../src/signing/verify.js'
import type {Store} from '../src/store/types.js'

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

/** What every document of one run is checked against. */
interface Checker {
  kind: DocumentKind | undefined
  evidence: RegistryEvidence
  store: Store | undefined
  historical: boolean
}

/** Verifies one document; synchronous unless a store is involved. */
function check(c: Checker, input: string, bytes: Buffer): Checked | Promise<Checked> {
  if (!c.store) return {input, result: verify(c.kind, bytes, c.evidence)}
  const presented = {bytes, kind: c.kind, subject: input}
  if (!c.historical) return verifyAudited(presented, c.evidence, c.store).then((result) => ({input, result}))
  return replayPresented(presented, c.evidence, c.store).then((r) =>
    r instanceof Rejection
      ? {input, result: r}
      : {
          input,
          result: r.verified,
          anchor: {
            admissionRecordId: r.admission.record.admissionRecordId,
            trustedAcceptedAt: r.admission.record.trustedAcceptedAt,
          },
        },
  )
}

/** A file's chunks; a failed read is an environment error (exit 3). */
async function* chunksOf(input: string): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of inputStream(input) as AsyncIterable<Buffer>) yield chunk
  } catch (e) {
    throw readFailure(input, e)
  }
}

/** Characters of batch output gathered before one write to stdout. */
const WRITE_AT = 1 << 16

/**
 * Batch output written as results come: one line per document, or with --json one JSON object
 * whose `documents` array is streamed and whose counts and status follow it (member order is
 * the only difference from a one-shot envelope). Holds only the counts and one pending write.
 */
class BatchOutput {
  #pending = ''
  #total = 0
  #rejected = 0
  #firstCode: Rejection['code'] | undefined

  constructor(
    private readonly json: boolean,
    private readonly explain: boolean,
  ) {
    if (json) this.#pending = '{"result":{"documents":['
  }

  /** Records one result; returns a promise when stdout must drain first. */
  add({input, result, anchor}: Checked): Promise<void> | undefined {
    if (!result.ok) {
      this.#rejected++
      this.#firstCode ??= result.code
    }
    if (this.json) {
      const entry = result.ok
        ? {input, status: 'verified', ...facts(result, anchor)}
        : {input, status: 'rejected', ...describeRejection(result, this.explain)}
      this.#pending += (this.#total > 0 ? ',' : '') + JSON.stringify(entry)
    } else {
      this.#pending += result.ok
        ? `${input}: verified ${result.kind} ${result.signingHash}\n`
        : `${input}: ${this.explain ? explainText(result).replace(/\n/g, '\n    ') : result.code}\n`
    }
    this.#total++
    return this.#pending.length >= WRITE_AT ? this.#write() : undefined
  }

  /** Ends the output after the last document. */
  async finish(): Promise<Outcome> {
    if (this.json) {
      const status = this.#firstCode === undefined ? '"ok"' : '"rejected"'
      const error = this.#firstCode === undefined ? '' : `,"error":${JSON.stringify(protocolError(this.#firstCode))}`
      this.#pending += `${this.#counts()},"status":${status}${error}}\n`
    }
    await this.#write()
    return {status: 'streamed', exit: this.#firstCode === undefined ? 'ok' : 'rejected'}
  }

  /** Ends the output when the run fails part way (an unreadable file, a store error). */
  async fail(failure: MwpError): Promise<Outcome> {
    const category = failure.category
    if (this.json) {
      const error = isErrorCode(failure.code)
        ? protocolError(failure.code)
        : {code: category.toUpperCase(), message: failure.message}
      const status = category === 'rejected' ? 'rejected' : 'error'
      this.#pending += `${this.#counts()},"status":"${status}","error":${JSON.stringify(error)}}\n`
    }
    await this.#write()
    if (!this.json) process.stderr.write(`mwp: ${failure.message}\n`)
    return {status: 'streamed', exit: category}
  }

  #counts(): string {
    const verified = this.#total - this.#rejected
    return `],"total":${this.#total},"verified":${verified},"rejected":${this.#rejected}}`
  }

  async #write(): Promise<void> {
    const text = this.#pending
    this.#pending = ''
    if (text !== '' && !process.stdout.write(text)) await once(process.stdout, 'drain')
  }
}

export default class Verify extends MwpCommand {
  static summary = 'Verify Signed Documents with the six-stage profile of spec §6.4.'
  static description = `Exit 0 when every document verifies; exit 1 when any is rejected, printing only the wire code (PROTOCOL_VIOLATION, SCHEMA_VALIDATION_FAILED or AUTH_INVALID_SIGNATURE). --explain adds the protected stage and reason, for the local operator only.

Several FILE arguments, or --ndjson with one document per line, verify many documents in one process (the registry is validated once). Results are written as each document is checked, and an NDJSON input of any length is read line by line in constant memory.

LIMITS (spec §6.4 stage 1, PROTOCOL_VIOLATION, exit 1): a document (a file, or one NDJSON line) larger than 16 MiB (16777216 bytes) is refused by its length without being read further; arrays and objects may nest at most 512 levels.

--store records every failure in that store's protected audit log (mwp audit list). --historical replays documents admitted earlier (mwp admit): the registry given is the authoritative historical registry, and the document must be anchored by a valid First-Admission Record in the store, so it still verifies after a later expiry or revocation of its key.

${exitCodesHelp({rejected: 'a document failed verification (the wire code is printed; --explain says why)', environment: 'cannot read a document, the registry or the store'})}`

  static examples = [
    '<%= config.bin %> verify --registry fixtures/registry.json fixtures/documents/command.json',
    '<%= config.bin %> sign --document-kind command --key fixtures/keys/coordinator.key.json fixtures/unsigned/command.json | <%= config.bin %> verify --registry fixtures/registry.json -',
    'cat many.ndjson | <%= config.bin %> verify --ndjson --registry fixtures/registry.json --json -',
    '<%= config.bin %> verify --historical --store sqlite:mwp.db --registry registry.json admitted.json',
  ]

  static strict = false
  static args = {file: Args.string({description: 'Document file, or - for stdin.', required: true})}
  static flags = {
    'document-kind': documentKindFlag(),
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
    const kind = flags['document-kind'] as DocumentKind | undefined
    const store = flags.store ? await openConfiguredStore(flags.store) : undefined
    const checker: Checker = {kind, evidence, store, historical: flags.historical}
    try {
      if (inputs.length === 1 && !flags.ndjson) return await single(checker, inputs[0]!, flags.explain)
      return await batch(checker, inputs, flags.ndjson, new BatchOutput(flags.json, flags.explain))
    } finally {
      await store?.close()
    }
  }
}

/** One document: its facts or its wire code. */
async function single(checker: Checker, input: string, explain: boolean): Promise<Outcome> {
  const checked = check(checker, input, await readCapped(input, MAX_DOCUMENT_BYTES))
  const {result, anchor} = checked instanceof Promise ? await checked : checked
  if (!result.ok) return rejectionOutcome(result, explain)
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

/**
 * Many documents, each written out as soon as it is checked: the files in turn, or every line of
 * each NDJSON input as its chunk arrives (the stream is read chunk by chunk, never whole).
 */
async function batch(checker: Checker, inputs: string[], ndjson: boolean, out: BatchOutput): Promise<Outcome> {
  const add = async (input: string, bytes: Buffer) => {
    const checked = check(checker, input, bytes)
    const drained = out.add(checked instanceof Promise ? await checked : checked)
    if (drained) await drained
  }
  try {
    for (const input of inputs) {
      if (!ndjson) {
        await add(input, await readCapped(input, MAX_DOCUMENT_BYTES))
        continue
      }
      const lines = new LineSplitter(MAX_DOCUMENT_BYTES)
      for await (const chunk of chunksOf(input))
        for (const line of lines.push(chunk)) await add(`${input}:${line.number}`, line.bytes)
      const last = lines.end()
      if (last) await add(`${input}:${last.number}`, last.bytes)
    }
  } catch (e) {
    return out.fail(asFailure(e))
  }
  return out.finish()
}
