// Admission bundle (`admission/manifest.json`, ACCEPTANCE N5, N6).
//
// Integrity first: the admission manifest's digest and artifacts, the pinned cryptography
// manifest digest, and the cryptography bundle itself (its documents and registries are used).
// Then each evaluation runs the real admitFirst()/replayHistorical() against a scripted
// AdmissionLog — the same interface the SQLite and PostgreSQL stores implement — and the runner
// asserts the outcome, the protected reason and the call counts:
//   (lookup, trustedContext, append) = (1, 0, 0) for historical replay or any lookup other than
//   authoritative absence; (1, 1, 0|1) after absence, append exactly when the manifest scripts it.
// For a committed append the candidate bytes must equal the scripted record file.

import {basename} from 'node:path'
import {admitFirst, replayHistorical} from '../admission/admit.js'
import type {
  AcceptanceContext,
  AdmissionLog,
  AppendResult,
  Candidate,
  LookupResult,
  TrustedContextSource,
} from '../admission/log.js'
import type {JsonObject} from '../json/parse.js'
import {schemaCatalog} from '../schema/catalog.js'
import {type DocumentKind, type Principal, isDocumentKind} from '../signing/profiles.js'
import {RegistryEvidence} from '../signing/registry.js'
import {Rejection, verify} from '../signing/verify.js'
import {BundleError, type BundleRoot, manifestDigest, requireDeclared, verifyIntegrity} from './bundle.js'
import {loadCryptographyManifest} from './cryptography.js'
import {type BundleReport, type CaseResult, type Progress, summarize} from './report.js'

interface Scripted {
  status: string
  record?: string
  authenticatedService?: Principal
}

interface Evaluation {
  id: string
  profileId: string
  mode: 'first-admission' | 'historical-replay'
  document: string
  registry: string
  trustedContext: AcceptanceContext | null
  lookup: Scripted
  append: Scripted | null
  expect: {stage: string; wireCode: string | null; record?: string; reason?: string}
}

const MANIFEST = 'admission/manifest.json'

function load(root: BundleRoot): Evaluation[] {
  const manifest = root.json(MANIFEST) as JsonObject
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest))
    throw new BundleError(`${MANIFEST} is not an object`)
  verifyIntegrity(root, manifest, 'admission')
  const pinned = manifest.cryptography as unknown as {manifest: string; artifactDigest: string}
  const crypto = root.json(pinned.manifest) as JsonObject
  if (manifestDigest(crypto) !== pinned.artifactDigest)
    throw new BundleError(
      `admission: the pinned cryptography digest ${pinned.artifactDigest} does not match ${pinned.manifest}`,
    )
  loadCryptographyManifest(root) // verifies the cryptography bundle the evaluations draw on

  const schemaPath = `${root.dir}/admission/manifest.schema.json`
  const catalog = schemaCatalog()
  const manifestSchema = catalog.compileExternal(root.json('admission/manifest.schema.json') as object)
  if (!manifestSchema(manifest)) throw new BundleError(`${MANIFEST} does not match ${schemaPath}`)

  const fixtureSchemas = manifest.fixtureSchemas as unknown as {record: string; registry: string}
  const registrySchema = catalog.compileExternal(root.json(fixtureSchemas.registry) as object)
  const evaluations = (manifest.cases as unknown as {evaluations: Evaluation[]}[]).flatMap((c) => c.evaluations)
  const declared = new Set<string>()
  for (const e of evaluations) {
    for (const p of [e.document, e.registry, e.lookup.record, e.append?.record, e.expect.record]) if (p) declared.add(p)
    if (!registrySchema(root.json(e.registry)))
      throw new BundleError(`${e.registry} does not match ${fixtureSchemas.registry}`)
    // Records an evaluation expects to succeed are fixtures of the record schema (ours, by name).
    if (e.expect.record) {
      const r = catalog.validate(basename(fixtureSchemas.record), root.json(e.expect.record))
      if (!r.valid) throw new BundleError(`${e.expect.record} does not match ${fixtureSchemas.record}`)
    }
  }
  const cryptoArtifacts = new Set((crypto.artifacts as unknown as {path: string}[]).map((a) => a.path))
  requireDeclared(
    manifest,
    [...declared].filter((p) => !cryptoArtifacts.has(p)),
    'admission',
  )
  return evaluations
}

/** The manifest's scripted adapter outcomes behind the real AdmissionLog interface. */
class ScriptedLog implements AdmissionLog, TrustedContextSource {
  calls = {lookup: 0, context: 0, append: 0}
  candidate?: Candidate
  problems: string[] = []

  constructor(
    private readonly root: BundleRoot,
    private readonly e: Evaluation,
  ) {}

  private stored(s: Scripted): {record: Uint8Array; authenticatedService: Principal} {
    return {record: this.root.bytes(s.record!), authenticatedService: s.authenticatedService!}
  }

  async lookup(): Promise<LookupResult> {
    this.calls.lookup++
    const s = this.e.lookup
    return (s.status === 'found' ? {status: 'found', ...this.stored(s)} : {status: s.status}) as LookupResult
  }

  async acceptanceContext(): Promise<AcceptanceContext> {
    this.calls.context++
    if (!this.e.trustedContext) {
      this.problems.push('trusted context requested but the manifest scripts none')
      throw new Error('unscripted trusted context')
    }
    return this.e.trustedContext
  }

  async appendOrReturnExisting(candidate: Candidate): Promise<AppendResult> {
    this.calls.append++
    this.candidate = candidate
    const s = this.e.append
    if (!s) {
      this.problems.push('append called but the manifest scripts none')
      return {status: 'indeterminate'}
    }
    return (
      s.status === 'committed' || s.status === 'existing' ? {status: s.status, ...this.stored(s)} : {status: s.status}
    ) as AppendResult
  }
}

async function runEvaluation(
  root: BundleRoot,
  e: Evaluation,
): Promise<{actual: string; problems: string[]; reason?: string}> {
  if (!isDocumentKind(e.profileId)) return {actual: 'error', problems: [`unknown profileId ${e.profileId}`]}
  const documentBytes = root.bytes(e.document)
  const verified = verify(
    e.profileId as DocumentKind,
    documentBytes,
    RegistryEvidence.fromBytes(root.bytes(e.registry)),
  )
  if (!verified.ok) {
    const d = Rejection.diagnostic(verified)
    return {
      actual: `rejected:${d.stage}`,
      problems: [`six-stage verification failed at ${d.stage} (${d.reason})`],
      reason: d.reason,
    }
  }
  const log = new ScriptedLog(root, e)
  let result
  try {
    result =
      e.mode === 'first-admission'
        ? await admitFirst(verified, documentBytes, log, log)
        : await replayHistorical(verified, documentBytes, log)
  } catch (err) {
    return {actual: 'error', problems: [...log.problems, (err as Error).message]}
  }
  const problems = [...log.problems]

  // Call counts (N5).
  const afterAbsence = e.mode === 'first-admission' && e.lookup.status === 'authoritative-absence'
  const want = {lookup: 1, context: afterAbsence ? 1 : 0, append: afterAbsence && e.append ? 1 : 0}
  const got = log.calls
  if (got.lookup !== want.lookup || got.context !== want.context || got.append !== want.append) {
    problems.push(
      `calls (lookup, context, append) = (${got.lookup}, ${got.context}, ${got.append}), want (${want.lookup}, ${want.context}, ${want.append})`,
    )
  }
  if (
    e.append?.status === 'committed' &&
    log.candidate &&
    e.append.record &&
    !Buffer.from(log.candidate.bytes).equals(root.bytes(e.append.record))
  ) {
    problems.push('candidate record bytes differ from the committed record file')
  }

  if (result instanceof Rejection) {
    const d = Rejection.diagnostic(result)
    if (e.expect.stage === 'complete')
      problems.push(`rejected at ${d.stage} (${d.reason}${d.detail ? `: ${d.detail}` : ''})`)
    else {
      if (d.stage !== e.expect.stage) problems.push(`stage ${d.stage}, want ${e.expect.stage}`)
      if (d.reason !== e.expect.reason) problems.push(`reason ${d.reason}, want ${e.expect.reason}`)
      if (result.code !== e.expect.wireCode) problems.push(`wire code ${result.code}, want ${e.expect.wireCode}`)
    }
    return {actual: `rejected:${d.stage}`, problems, reason: d.reason}
  }
  if (e.expect.stage !== 'complete') problems.push(`admitted (${result.outcome}), want ${e.expect.reason}`)
  else if (e.expect.record && !Buffer.from(result.recordBytes).equals(root.bytes(e.expect.record)))
    problems.push('returned record differs from the expected record')
  return {actual: 'complete', problems}
}

export async function runAdmission(root: BundleRoot, progress?: Progress): Promise<BundleReport> {
  const evaluations = load(root)
  const results: CaseResult[] = []
  for (const e of evaluations) {
    const {actual, problems, reason} = await runEvaluation(root, e)
    const expected = e.expect.stage === 'complete' ? 'complete' : `rejected:${e.expect.stage}`
    const r: CaseResult = {bundle: 'admission', id: `${e.mode} ${e.id}`, expected, actual, pass: problems.length === 0}
    if (reason) r.reason = reason
    if (e.expect.reason) r.fault = e.expect.reason
    if (problems.length > 0) r.detail = problems.join('; ')
    results.push(r)
    progress?.(r, results.length, evaluations.length)
  }
  return summarize('admission', root.dir, results)
}
