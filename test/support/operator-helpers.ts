// Shared setup of the operator CLI tests: a `mwp org init` Organization in a temp directory, the
// flags that point the CLI at its config and embedded store, and an in-process local transport on
// the same store for setup steps and for checking what a command did. Setup that is not under
// test runs in-process (same signer, same store): fewer subprocesses keep the files fast, and
// each test still drives the command it is about as a real subprocess.

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {loadOrgConfig} from '../../src/config/org-config.js'
import {readKeyFile} from '../../src/crypto/keyfile.js'
import {buildCommand} from '../../src/operator/command-builder.js'
import {missionCreatePayload} from '../../src/operator/mission-payloads.js'
import {messageText} from '../../src/operator/render.js'
import {type EventDoc, type Transport, openLocalTransport} from '../../src/operator/transport.js'
import {foldGroup} from '../../src/operator/views.js'
import {contract} from './authority-helpers.js'
import {mwp} from './cli.js'

export const ORG = 'urn:mwp:dev:org:local'

export interface OperatorOrg {
  root: string
  org: string
  /** --config and --store flags of the Organization. */
  local: string[]
  reader: Transport
  close(): Promise<void>
}

export async function operatorOrg(tag: string): Promise<OperatorOrg> {
  const root = mkdtempSync(join(tmpdir(), `mwp-${tag}-`))
  const org = join(root, 'org')
  const r = mwp(['org', 'init', org, '--workers', '1', '--json'])
  if (r.status !== 0) throw new Error(`org init failed: ${r.stdout}${r.stderr}`)
  const reader = await openLocalTransport(loadOrgConfig(join(org, 'mwp.config.json')))
  return {
    root,
    org,
    local: ['--config', join(org, 'mwp.config.json'), '--store', `sqlite:${join(org, 'authority.db')}`],
    reader,
    async close() {
      await reader.close()
      rmSync(root, {recursive: true, force: true})
    },
  }
}

export const keyPath = (o: OperatorOrg, name: string) => join(o.org, 'keys', `${name}.key.json`)

/** Runs `mwp ARGS --config … --store …`. */
export const opOn =
  (o: OperatorOrg) =>
  (args: string[], options: {input?: string; env?: NodeJS.ProcessEnv} = {}) =>
    mwp([...args, ...o.local], options)

/** Signs `kind` with the named dev key (epochs from the current state) and submits it in-process. */
export async function given(o: OperatorOrg, signer: string, kind: string, g: string, payload: Record<string, unknown>) {
  const state = kind === 'mission.create' ? null : foldGroup(await logged(o, g))
  const r = await o.reader.submit(
    buildCommand(readKeyFile(keyPath(o, signer)), {kind, groupId: g, payload, state}).bytes,
  )
  if ('error' in r) throw new Error(`setup ${kind} rejected: ${r.error.code}`)
  return r.receipt
}

/** A new root Mission by the dev MissionOwner with the dev Coordinator; returns its Group ID. */
export async function givenMission(o: OperatorOrg, objective = 'Ship the release notes'): Promise<string> {
  const payload = missionCreatePayload({organization: ORG, objective, coordinatorAgentId: `${ORG}:agent:coordinator`})
  await given(o, 'owner', 'mission.create', payload.groupId as string, payload)
  return payload.groupId as string
}

/** The Group's Events (verified), optionally only one kind. */
export async function logged(o: OperatorOrg, g: string, kind?: string): Promise<EventDoc[]> {
  const all = await o.reader.events(g)
  if (all === null) throw new Error(`${g}: GROUP_NOT_FOUND`)
  return kind ? all.filter((e) => e.kind === kind) : all
}

/** A Work Contract (§10.1) for the dev Organization's capability; `extra` overrides fields. */
export const devContract = (extra: Record<string, unknown> = {}): Record<string, unknown> =>
  contract({goal: 'Draft the notes', requiredCapabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}], ...extra})

/** A work.offer selectionBasis (§10.3) naming `candidate` as a match for the dev Organization's capability. */
export const devSelectionBasis = (candidate: string): Record<string, unknown> => ({
  [candidate]: {
    verifiedMatches: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
    authorizationEligible: true,
    availabilityEstimate: '2026-12-01T09:00:00Z',
    expectedCost: 1,
    reliabilityEvidence: [],
    policyRulesApplied: ['org.assignment.capability-match'],
  },
})

/** Protocol time `n` days from now (a Mission created now by `mission create` ends in 30). */
export const inDays = (n: number) => new Date(Date.now() + n * 24 * 3600 * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')

/**
 * The mission.create_child payload promoting WorkItem `w` of Group `g` to Group `${g}-child`, whose
 * approval policy asks for the root human's final approval (§14).
 */
export function humanGatedChild(
  g: string,
  w: string,
  coordinatorAgentId: string,
): {cg: string; payload: Record<string, unknown>} {
  const cg = `${g}-child`
  return {
    cg,
    payload: {
      workItemId: w,
      missionId: `${cg}:mission`,
      groupId: cg,
      objective: 'Draft the notes',
      definitionOfDone: [{criterionId: 'notes', description: 'Draft ready', evidenceRequired: ['human_review']}],
      deadline: inDays(10),
      budget: {currency: 'EUR', financialLimit: 5},
      approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: true},
      coordinatorAgentId,
    },
  }
}

/** The text of a message.posted Event, as the views read it. */
export const text = (e: {payload: Record<string, unknown>}) => messageText(e as never)
