// The proof of concept's checks: each one measures something from what really happened — the
// observed Events, the Agents' local stores, the authority's store and every process's logs — and
// records the numbers with pass or fail. Every check runs even when an earlier one failed, and a
// check that throws fails with the error as its detail.

import {existsSync, readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {AgentStore} from '../agent/local-store.js'
import type {WorkItemView} from '../authority/model/state.js'
import type {Store} from '../store/index.js'
import {type ReviewReport, failures} from '../agent/coordinator/review.js'
import {ArtifactBlobs, artifactDirFor} from '../store/artifact-blobs.js'
import {contentHash} from '../crypto/hash.js'
import {loadOrgConfig, openAuthorityFromConfig} from '../config/org-config.js'
import {schemaCatalog} from '../schema/catalog.js'
import {RegistryEvidence} from '../signing/registry.js'
import {Rejection, verify} from '../signing/verify.js'
import type {PocProcess} from './cluster.js'
import type {FaultId, FaultRecord} from './injections.js'
import {type GroupFacts, lastOf} from './observe.js'
import type {PocPlans} from './plans.js'
import {A_WORKER, B_WORKER, SHARED_WORKER, URGENT_POLICY, WORKER_SLOTS} from './plans.js'
import type {TraceCheck} from './report/trace.js'
import {PROJECTS} from './work/projects.js'
import {parseRequirements} from './work/requirements.js'
import {REQUIREMENTS_PATH, docs, implement, requirements, tests} from './work/stages.js'
import {pocStage} from './work/stage.js'
import {SLOT_RUNS_FILE} from './work/handler.js'

export interface PocFacts {
  dir: string
  config: string
  organization: string
  groups: Map<string, GroupFacts>
  missions: {a: string; b: string; c?: string}
  procs: PocProcess[]
  plans: PocPlans
  seed: number
  changeRequest: string
  /** What the failure suite injected (injections.ts), and whether it was asked for. */
  faults: FaultRecord[]
  faultsExpected: boolean
  /** Why the scripted run stopped before both Missions were approved, if it did. */
  unfinished?: string
}

type Measured = TraceCheck['measured']
type Verdict = {passed: boolean; measured: Measured; detail?: string}
type CheckFn = (f: Facts) => Verdict | Promise<Verdict>

/** The facts with a few lookups every check uses. */
interface Facts extends PocFacts {
  a: GroupFacts
  b: GroupFacts
  child: GroupFacts | undefined
  agentId(name: string): string
  proc(name: string): PocProcess | undefined
  items(g: GroupFacts): WorkItemView[]
  stageOf(w: WorkItemView): string | undefined
  /** The run's authority store, opened once for every check that reads it (closed by evaluate). */
  authority(): Promise<{store: Store; registry: RegistryEvidence}>
}

const ok = (passed: boolean, measured: Measured, detail?: string): Verdict =>
  detail === undefined ? {passed, measured} : {passed, measured, detail}

const CHECKS: {id: string; title: string; run: CheckFn}[] = [
  {
    id: 'run.finished',
    title: 'The run went through to the last approval within its time',
    run: ({unfinished}) => ok(unfinished === undefined, {finished: unfinished === undefined}, unfinished),
  },
  {
    id: 'mission.a.approved',
    title: 'Mission A (textkit) reached human Approval',
    run: ({a}) => ok(a.state?.mission.state === 'approved', {state: a.state?.mission.state ?? 'none'}),
  },
  {
    id: 'mission.b.approved',
    title: 'Mission B (semver-lite) reached human Approval',
    run: ({b}) => ok(b.state?.mission.state === 'approved', {state: b.state?.mission.state ?? 'none'}),
  },
  {
    id: 'mission.concurrent',
    title: 'The two Missions ran concurrently (both active at once, with runs overlapping)',
    run: ({a, b}) => {
      const span = (g: GroupFacts) => {
        const starts = g.runs.map((r) => Date.parse(r.startedAt))
        const ends = g.runs.map((r) => Date.parse(r.endedAt ?? r.startedAt))
        return [Math.min(...starts), Math.max(...ends)] as const
      }
      const [a0, a1] = span(a)
      const [b0, b1] = span(b)
      const overlapMs = Math.max(0, Math.min(a1, b1) - Math.max(a0, b0))
      return ok(overlapMs > 0, {overlapMs})
    },
  },
  {
    id: 'graph.stages',
    title: 'Mission A ran requirements, tests, implementation, code review and integration as separate WorkItems',
    run: (f) => {
      const stages = new Set(
        f
          .items(f.a)
          .filter((w) => w.state === 'verified')
          .map((w) => f.stageOf(w)),
      )
      const want = ['requirements', 'tests', 'implement', 'review', 'integrate']
      const missing = want.filter((s) => !stages.has(s))
      return ok(
        missing.length === 0,
        {verifiedStages: stages.size},
        missing.length ? `missing ${missing.join(', ')}` : undefined,
      )
    },
  },
  {
    id: 'graph.dependencies',
    title:
      'Every WorkItem was authorized only after its dependencies were verified, with verified Artifacts of its Mission as inputs',
    run: (f) => {
      let edges = 0
      const bad: string[] = []
      for (const g of [f.a, f.b, f.child].filter((x) => x !== undefined)) {
        const produced = new Set(
          f.items(g).flatMap((w) => (w.state === 'verified' ? (w.submission?.artifactHashes ?? []) : [])),
        )
        for (const w of f.items(g)) {
          const authorized = g.authorizedAt.get(w.workItemId) ?? 0
          for (const d of w.contract.dependencyWorkItemIds) {
            edges++
            const verified = g.verifiedAt.get(d)
            if (verified === undefined || verified >= authorized)
              bad.push(`${w.contract.goal} before ${d} was verified`)
          }
          for (const h of w.contract.inputArtifacts)
            if (!produced.has(h))
              bad.push(`${w.contract.goal}: input ${h.slice(0, 15)}… is no verified result of this Mission`)
        }
      }
      return ok(edges > 0 && bad.length === 0, {edges, violations: bad.length}, bad.slice(0, 3).join('; ') || undefined)
    },
  },
  {
    id: 'graph.contracts-complete',
    title: 'Every WorkItem carries a complete Work Contract (work-contract schema)',
    run: (f) => {
      const catalog = schemaCatalog()
      let n = 0
      const bad: string[] = []
      for (const g of [f.a, f.b, f.child].filter((x) => x !== undefined))
        for (const w of f.items(g)) {
          n++
          if (!catalog.validate('work-contract', w.contract).valid) bad.push(w.contract.goal)
        }
      return ok(n > 0 && bad.length === 0, {contracts: n, invalid: bad.length}, bad.join('; ') || undefined)
    },
  },
  {
    id: 'review.rejected-failing-test',
    title: "The Coordinator's review ran the tests and sent a submission with a really failing test back",
    run: (f) => {
      const reviews = coordinatorLogs(f).filter((l) => l.event === 'reviewed' && l.verdict === 'rework')
      const failing = reviews.flatMap((l) => (l.failed as string[]).filter((x) => x.startsWith('tests:')))
      const rejected = f.a.rejections.filter(
        (r) => r.actorId === f.a.state?.mission.coordinator?.agentId || r.actorId === f.agentId('coordinator'),
      )
      return ok(
        failing.length > 0 && rejected.length > 0,
        {reworkVerdicts: reviews.length, rejections: rejected.length},
        failing[0],
      )
    },
  },
  {
    id: 'review.rework-verified',
    title: 'The rejected WorkItem was reworked and verified with a different submission',
    run: (f) => {
      const ids = new Set(f.a.rejections.map((r) => r.workItemId))
      const reworked = [...ids].filter((w) => f.a.state!.workItems[w]?.state === 'verified')
      const rounds = [...ids].map((w) => f.a.offers.filter((o) => o.workItemId === w).length)
      return ok(ids.size > 0 && reworked.length === ids.size, {
        rejectedItems: ids.size,
        verified: reworked.length,
        offers: Math.max(0, ...rounds),
      })
    },
  },
  {
    id: 'review.every-result',
    title: 'Every verified WorkItem was accepted only after a passing review of its submission',
    run: (f) => {
      const accepted = new Set(
        coordinatorLogs(f)
          .filter((l) => l.event === 'reviewed' && l.verdict === 'accept')
          .map((l) => String(l.workItemId)),
      )
      const verified = [f.a, f.b, f.child]
        .filter((x) => x !== undefined)
        .flatMap((g) => f.items(g).filter((w) => w.state === 'verified' && w.childMission === undefined))
      const unreviewed = verified.filter((w) => !accepted.has(w.workItemId))
      return ok(verified.length > 0 && unreviewed.length === 0, {
        verified: verified.length,
        unreviewed: unreviewed.length,
      })
    },
  },
  {
    id: 'review.not-own-output',
    title: 'The code review was done by another Agent than the implementation',
    run: (f) => {
      const by = (stage: string) => f.items(f.a).find((w) => f.stageOf(w) === stage && w.state === 'verified')
      const author = ownerOf(f.a, by('implement'))
      const reviewer = ownerOf(f.a, by('review'))
      return ok(author !== undefined && reviewer !== undefined && author !== reviewer, {
        author: author ?? 'none',
        reviewer: reviewer ?? 'none',
      })
    },
  },
  {
    id: 'review.findings-carried',
    title: "Each offer of rejected work carried the review's findings to the next owner in its signed Context Package",
    run: (f) => {
      const reoffers = [f.a, f.b, f.child]
        .filter((x) => x !== undefined)
        .flatMap((g) => g.offers.filter((o) => o.afterRejection))
      const without = reoffers.filter((o) => o.reworkFindings.length === 0)
      return ok(
        reoffers.length > 0 && without.length === 0,
        {reoffers: reoffers.length, withoutFindings: without.length},
        reoffers[0]?.reworkFindings[0],
      )
    },
  },
  {
    id: 'review.report-published',
    title: 'Each rejection cites a review report published as an Artifact of the Group, naming the failed checks',
    run: async (f) => {
      const blobs = new ArtifactBlobs(artifactDirOf(f))
      const rejections = [f.a, f.b, f.child]
        .filter((x) => x !== undefined)
        .flatMap((g) => g.rejections.map((r) => ({g, r})))
      const bad: string[] = []
      for (const {g, r} of rejections) {
        const hash = r.evidenceHashes[0]
        const bytes = hash === undefined ? null : await blobs.get(g.groupId, hash).catch(() => null)
        const report = bytes === null ? null : (JSON.parse(bytes.toString('utf8')) as ReviewReport)
        if (report?.workItemId !== r.workItemId || report.verdict !== 'rework' || failures(report).length === 0)
          bad.push(r.workItemId.slice(-8))
      }
      return ok(rejections.length > 0 && bad.length === 0, {rejections: rejections.length, withoutReport: bad.length})
    },
  },
  {
    id: 'approval.human-signed',
    title: "Each root Approval is the human MissionOwner's, signed, and verifies",
    run: (f) => {
      const registry = RegistryEvidence.fromBytes(readFileSync(join(f.dir, 'org', 'registry.json')))
      const owner = `${f.organization}:human:owner`
      let verified = 0
      const problems: string[] = []
      for (const g of [f.a, f.b]) {
        for (const ap of g.approvals) {
          if (ap.approverId !== owner) problems.push(`approver ${ap.approverId}`)
          const r = verify('approval', Buffer.from(JSON.stringify(ap.document)), registry)
          if (r instanceof Rejection) problems.push(`an Approval does not verify: ${r.code}`)
          else verified++
        }
      }
      return ok(verified === 2 && problems.length === 0, {verified}, problems.join('; ') || undefined)
    },
  },
  {
    id: 'approval.exact-submission',
    title: 'Each Approval names exactly the submitted revision and Artifact set',
    run: ({a, b}) => {
      const mismatched = [a, b].filter((g) => {
        const last = g.submissions.at(-1)
        const ap = g.approvals.at(-1)
        return (
          !last || !ap || ap.missionRevision !== last.missionRevision || !same(ap.artifactHashes, last.artifactHashes)
        )
      })
      return ok(mismatched.length === 0, {
        approvals: a.approvals.length + b.approvals.length,
        mismatched: mismatched.length,
      })
    },
  },
  {
    id: 'approval.after-verification',
    title: 'Each Approval came after every WorkItem that produced an approved Artifact was verified',
    run: (f) => {
      let checked = 0
      const early: string[] = []
      for (const g of [f.a, f.b, f.child].filter((x) => x !== undefined)) {
        const approvedAt = g.approvals.at(-1)?.sequence
        const approved = new Set(g.approvals.at(-1)?.artifactHashes ?? [])
        for (const w of f.items(g).filter((x) => x.submission?.artifactHashes.some((h) => approved.has(h)))) {
          checked++
          const verified = g.verifiedAt.get(w.workItemId)
          if (approvedAt === undefined || verified === undefined || verified > approvedAt) early.push(w.contract.goal)
        }
      }
      return ok(checked > 0 && early.length === 0, {workItems: checked, notVerifiedFirst: early.length})
    },
  },
  {
    id: 'change-request.corrective-work',
    title: 'The human change request reopened Mission A, a corrective WorkItem ran, and A was submitted again',
    run: (f) => {
      // The reason the human gave (a person's own words with --interactive).
      const reason = f.a.changeRequests[0]?.reason ?? f.changeRequest
      const corrective = f.items(f.a).filter((w) => w.contract.goal.includes(reason))
      return ok(
        f.a.changeRequests.length === 1 &&
          corrective.length > 0 &&
          corrective.every((w) => w.state === 'verified') &&
          f.a.submissions.length === 2,
        {changeRequests: f.a.changeRequests.length, corrective: corrective.length, submissions: f.a.submissions.length},
      )
    },
  },
  {
    id: 'change-request.history-kept',
    title: 'The first submission and its WorkItems stayed in the history (nothing deleted)',
    run: ({a}) => {
      const first = a.submissions[0]
      const stillThere = (first?.artifactHashes ?? []).filter((h) =>
        Object.values(a.state?.workItems ?? {}).some((w) => w.submission?.artifactHashes.includes(h)),
      )
      return ok(first !== undefined && stillThere.length === first.artifactHashes.length, {
        firstSubmissionArtifacts: first?.artifactHashes.length ?? 0,
        stillCited: stillThere.length,
      })
    },
  },
  {
    id: 'child.mission',
    title: 'A WorkItem of A became a child Mission with its own Coordinator, approved by the Parent Coordinator',
    run: (f) => {
      const parentItem = f.items(f.a).find((w) => w.childMission !== undefined)
      const approver = f.child?.approvals.at(-1)?.approverId
      // §14: the Parent Coordinator that created it is the child's MissionOwner and approves it.
      const owner = f.child?.state?.mission.missionOwner
      return ok(
        parentItem?.state === 'verified' &&
          f.child?.state?.mission.state === 'approved' &&
          owner?.type === 'agent' &&
          approver === owner.id &&
          f.child.state.mission.coordinator?.agentId === f.agentId('coordinator-2'),
        {
          parentItem: parentItem?.state ?? 'none',
          child: f.child?.state?.mission.state ?? 'none',
          approver: approver ?? 'none',
        },
      )
    },
  },
  {
    id: 'worker.shared',
    title: 'The shared Worker executed WorkItems of both Missions',
    run: (f) => {
      const id = f.agentId(SHARED_WORKER)
      const inA = f.a.runs.filter((r) => r.agentId === id).length
      const inB = f.b.runs.filter((r) => r.agentId === id).length
      return ok(inA > 0 && inB > 0, {runsA: inA, runsB: inB})
    },
  },
  {
    id: 'slots.parallel',
    title: 'The shared Worker ran two WorkItems at once in its two slots',
    run: (f) => {
      const c = maxConcurrency(allRuns(f).filter((r) => r.agentId === f.agentId(SHARED_WORKER)))
      return ok(c >= 2, {maxConcurrent: c})
    },
  },
  {
    id: 'slots.bounded',
    title: 'No Worker ran more WorkItems at once than it has slots',
    run: (f) => {
      const over = Object.entries(WORKER_SLOTS).filter(
        ([name, n]) => maxConcurrency(allRuns(f).filter((r) => r.agentId === f.agentId(name))) > n,
      )
      return ok(over.length === 0, {workers: 3, over: over.length})
    },
  },
  {
    id: 'queues.per-group',
    title: "The shared Worker's local store kept a distinct queue per Group",
    run: (f) => {
      const store = agentStore(f, SHARED_WORKER)
      try {
        const groups = store.groups().map((g) => g.groupId)
        const qa = store.queue(f.missions.a).map((e) => e.workItemId)
        const qb = store.queue(f.missions.b).map((e) => e.workItemId)
        const shared = qa.filter((w) => qb.includes(w)).length
        return ok(groups.includes(f.missions.a) && groups.includes(f.missions.b) && shared === 0, {
          groups: groups.length,
          queueA: qa.length,
          queueB: qb.length,
        })
      } finally {
        store.close()
      }
    },
  },
  {
    id: 'selection.basis',
    title: 'Every offer recorded a structured selection basis for each candidate',
    run: (f) => {
      const offers = [f.a, f.b, f.child].filter((x) => x !== undefined).flatMap((g) => g.offers)
      const missing = offers.filter((o) => !o.candidates.every((c) => o.basisFor.includes(c)))
      return ok(offers.length > 0 && missing.length === 0, {offers: offers.length, missing: missing.length})
    },
  },
  {
    id: 'selection.presence',
    title: "Every offer's selection basis recorded each candidate's Presence, read fresh from the authority (§6.2)",
    run: (f) => {
      const offers = [f.a, f.b, f.child].filter((x) => x !== undefined).flatMap((g) => g.offers)
      const unrecorded = offers.filter((o) => o.presence.length === 0 || o.presence.includes('none')).length
      const fresh = offers.filter((o) => o.presence.some((p) => p !== 'no fresh record')).length
      return ok(offers.length > 0 && unrecorded === 0 && fresh > 0, {
        offers: offers.length,
        unrecorded,
        withFreshPresence: fresh,
      })
    },
  },
  {
    id: 'delivery.in-order',
    title: 'The observer received every Event of every Group once, in order, with no gap',
    run: (f) => {
      const gs = [...f.groups.values()]
      const bad = gs.filter((g) => g.outOfOrder > 0 || g.count !== g.lastSequence)
      return ok(bad.length === 0, {groups: gs.length, events: gs.reduce((n, g) => n + g.count, 0), bad: bad.length})
    },
  },
  {
    id: 'delivery.cursors-agree',
    title: "For every Worker and Group: the authority's Cursor equals the Worker's own",
    run: async (f) => {
      const {store} = await f.authority()
      let pairs = 0
      const bad: string[] = []
      for (const name of [SHARED_WORKER, A_WORKER, B_WORKER]) {
        const local = agentStore(f, name)
        try {
          for (const g of local.groups()) {
            pairs++
            const server = await store.cursors().get(f.agentId(name), g.groupId)
            const client = local.cursor(g.groupId)
            if (server !== client) bad.push(`${name}: server ${server} client ${client}`)
          }
        } finally {
          local.close()
        }
      }
      return ok(pairs > 0 && bad.length === 0, {pairs, disagree: bad.length}, bad.slice(0, 3).join('; ') || undefined)
    },
  },
  {
    id: 'events.verify',
    title: 'Every stored Event verifies (six stages) and no Action has two receipts',
    run: async (f) => {
      const {store, registry} = await f.authority()
      let events = 0
      let failed = 0
      let duplicates = 0
      for (const g of f.groups.values()) {
        // One Command's Events are contiguous and share its cause: a cause seen again later is a second receipt.
        const actions = new Set<string>()
        let lastCause = ''
        let after = 0
        for (;;) {
          const page = await store.read(g.groupId, after, 200)
          for (const e of page.events) {
            events++
            const r = verify('event', e.bytes, registry)
            if (r instanceof Rejection) failed++
            else {
              const cause = r.document.cause as {type?: string; id?: string} | undefined
              const key = `${(r.document.actor as {id: string}).id} ${cause?.id}`
              if (cause?.type === 'command' && key !== lastCause) {
                if (actions.has(key)) duplicates++
                actions.add(key)
              }
              lastCause = key
            }
            after = e.sequence
          }
          if (page.events.length === 0 || after >= page.head) break
        }
      }
      return ok(events > 0 && failed === 0 && duplicates === 0, {events, failed, duplicateReceipts: duplicates})
    },
  },
  {
    id: 'artifacts.deterministic',
    title: 'The delivered files equal what the generators make for this seed (a fault-free run gives the same bytes)',
    run: (f) => {
      const expected = expectedFiles(f.seed)
      const names = new Map([...f.groups.values()].flatMap((g) => [...g.names.entries()]))
      let compared = 0
      const differ: string[] = []
      for (const g of [f.a, f.b, f.child].filter((x) => x !== undefined))
        for (const w of f.items(g).filter((x) => x.state === 'verified')) {
          const project = (w.contract.constraints?.poc as {project?: string} | undefined)?.project
          for (const h of w.submission?.artifactHashes ?? []) {
            const name = names.get(h)
            const want = project && name ? expected.get(`${project}/${name}`) : undefined
            if (want === undefined) continue
            compared++
            if (want !== h) differ.push(`${project}/${name}`)
          }
        }
      return ok(compared >= 8 && differ.length === 0, {compared, differ: differ.length}, differ.join(', ') || undefined)
    },
  },
  {
    id: 'artifacts.stored-intact',
    title: "Every approved Artifact is in the authority's Artifact store and its bytes hash to the approved hash",
    run: async (f) => {
      const blobs = new ArtifactBlobs(artifactDirOf(f))
      let read = 0
      const bad: string[] = []
      for (const g of [f.a, f.b, f.child].filter((x) => x !== undefined))
        for (const h of g.approvals.at(-1)?.artifactHashes ?? []) {
          const bytes = await blobs.get(g.groupId, h).catch(() => null)
          if (bytes === null || contentHash(bytes) !== h) bad.push(h.slice(0, 15))
          else read++
        }
      return ok(read >= 5 && bad.length === 0, {read, missingOrDamaged: bad.length}, bad.join(', ') || undefined)
    },
  },
  {
    id: 'events.contiguous',
    title:
      "Every Group's stored log runs from sequence 1 to its head without a gap or repeat, and the observer saw the head",
    run: async (f) => {
      const {store} = await f.authority()
      let events = 0
      const bad: string[] = []
      for (const g of f.groups.values()) {
        let expected = 1
        let head = 0
        for (;;) {
          const page = await store.read(g.groupId, expected - 1, 200)
          head = page.head
          for (const e of page.events) {
            events++
            if (e.sequence !== expected) bad.push(`${g.groupId.slice(-8)}: ${e.sequence} where ${expected} was due`)
            expected = e.sequence + 1
          }
          if (page.events.length === 0 || expected > head) break
        }
        if (expected !== head + 1 || g.lastSequence !== head)
          bad.push(`${g.groupId.slice(-8)}: head ${head}, read to ${expected - 1}, observed ${g.lastSequence}`)
      }
      return ok(
        events > 0 && bad.length === 0,
        {groups: f.groups.size, events, problems: bad.length},
        bad.slice(0, 3).join('; ') || undefined,
      )
    },
  },
  {
    id: 'deadlines.met',
    title: 'Every WorkItem was submitted before its contract deadline and every Mission approved before its deadline',
    run: (f) => {
      let items = 0
      const late: string[] = []
      const missions = [...f.groups.values()].filter((g) => g.state?.mission.state === 'approved')
      for (const g of missions) {
        if (Date.parse(g.approvals.at(-1)!.at) > Date.parse(g.state!.mission.deadline)) late.push(g.groupId)
        for (const w of f.items(g).filter((x) => x.state === 'verified' && x.childMission === undefined)) {
          items++
          const submitted = lastOf(g.runs, (r) => r.workItemId === w.workItemId && r.outcome === 'submitted')
          if (submitted === undefined || Date.parse(submitted.endedAt!) > Date.parse(w.contract.deadline))
            late.push(w.contract.goal)
        }
      }
      return ok(missions.length >= 3 && items > 0 && late.length === 0, {
        missions: missions.length,
        workItems: items,
        late: late.length,
      })
    },
  },
  {
    id: 'isolation.slot-dirs',
    title:
      "Each slot working directory held the runs of one WorkItem of one Group (a slot's files never reach another)",
    run: (f) => {
      const root = join(f.dir, 'org', 'agents', 'slots')
      let dirs = 0
      let runs = 0
      const mixed: string[] = []
      for (const d of existsSync(root) ? readdirSync(root, {withFileTypes: true}) : []) {
        const file = join(root, d.name, SLOT_RUNS_FILE)
        if (!d.isDirectory() || !existsSync(file)) continue
        dirs++
        const owners = new Set(
          readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => l.length > 0)
            .map((l) => {
              runs++
              const r = JSON.parse(l) as {groupId: string; workItemId: string}
              return `${r.groupId} ${r.workItemId}`
            }),
        )
        if (owners.size > 1) mixed.push(`${d.name.slice(0, 8)}: ${owners.size} WorkItems`)
      }
      return ok(
        dirs >= 8 && mixed.length === 0,
        {dirs, runs, shared: mixed.length},
        mixed.slice(0, 3).join('; ') || undefined,
      )
    },
  },
  {
    id: 'transport.wss-only',
    title: 'Every Agent process talked to the authority only over wss:// (no store, no in-process shortcut)',
    run: (f) => {
      const agents = f.procs.filter((p) => p.name !== 'authority')
      const bad = agents.filter((p) => {
        const args = p.child.spawnargs
        const url = args[args.indexOf('--url') + 1]
        return !args.includes('--url') || !url?.startsWith('wss://') || args.includes('--store')
      })
      return ok(agents.length >= 6 && bad.length === 0, {agents: agents.length, other: bad.length})
    },
  },
  {
    id: 'isolation.groups',
    title: "No Artifact of one Mission entered the other Mission's WorkItems (context isolation)",
    run: ({a, b}) => {
      const hashes = (g: GroupFacts) =>
        new Set(
          Object.values(g.state?.workItems ?? {}).flatMap((w) => [
            ...w.contract.inputArtifacts,
            ...(w.submission?.artifactHashes ?? []),
          ]),
        )
      const ha = hashes(a)
      const crossing = [...hashes(b)].filter((h) => ha.has(h))
      return ok(crossing.length === 0, {artifactsA: ha.size, crossing: crossing.length})
    },
  },
  {
    id: 'isolation.membership',
    title: 'Worker Agents became members of a Mission only through offers there (just-in-time, §8)',
    run: (f) => {
      let members = 0
      const uninvited: string[] = []
      for (const g of [f.a, f.b, f.child].filter((x) => x !== undefined)) {
        const offered = new Set(g.offers.flatMap((o) => o.candidates))
        for (const m of Object.values(g.state?.members ?? {})) {
          if (m.role !== 'worker') continue
          members++
          if (!offered.has(m.principal.id)) uninvited.push(m.principal.id)
        }
      }
      return ok(members > 0 && uninvited.length === 0, {workerMemberships: members, uninvited: uninvited.length})
    },
  },
  {
    id: 'coordinator.lease-renewed',
    title: 'Both Coordinators renewed their Coordinator leases while they worked',
    run: ({a, b}) => {
      const renewals = (g: GroupFacts) => g.kinds.get('mission.coordinator.renewed') ?? 0
      return ok(renewals(a) > 0 && renewals(b) > 0, {renewalsA: renewals(a), renewalsB: renewals(b)})
    },
  },
  {
    id: 'process.separate',
    title: 'The authority and every Agent ran as its own OS process',
    run: ({procs}) => {
      const pids = new Set(procs.map((p) => p.child.pid))
      const names = new Set(procs.map((p) => p.name))
      // The authority, three Coordinators and three Workers; a restarted Worker is one more process.
      return ok(pids.size === procs.length && names.size === 7, {processes: procs.length, distinctPids: pids.size})
    },
  },
  {
    id: 'process.clean-stop',
    title: 'Every process not killed by the failure suite stopped cleanly on SIGTERM (exit 0)',
    run: async ({procs, faults}) => {
      const killed = new Set(faults.map((r) => r.measured.killedPid))
      const codes = await Promise.all(procs.map((p) => p.exited))
      const bad = procs
        .map((p, i) => ({p, code: codes[i]}))
        .filter(({p, code}) => !killed.has(p.child.pid ?? -1) && code !== 0)
        .map(({p, code}) => `${p.name}=${code}`)
      return ok(
        bad.length === 0,
        {processes: procs.length, killed: killed.size, unclean: bad.length},
        bad.join(', ') || undefined,
      )
    },
  },
  {
    id: 'logs.no-errors',
    title: 'No process logged an error',
    run: ({procs}) => {
      const errors = procs.flatMap((p) => p.logs.filter((l) => l.level === 'error').map((l) => `${p.name}: ${l.event}`))
      return ok(errors.length === 0, {errors: errors.length}, errors.slice(0, 3).join('; ') || undefined)
    },
  },
  {
    id: 'fault.worker-restart.injected',
    title: 'The shared Worker was killed with SIGKILL mid-run, its local database deleted, and restarted',
    run: (f) =>
      fault(f, 'worker-restart', (r) =>
        ok(
          r.measured.signal === 'SIGKILL' &&
            Number(r.measured.deletedPaths) >= 1 &&
            r.measured.restartedPid !== r.measured.killedPid,
          r.measured,
        ),
      ),
  },
  {
    id: 'fault.worker-restart.resumed',
    title: "The killed run's WorkItem was taken up again (new lease) and verified, once",
    run: (f) =>
      fault(f, 'worker-restart', (r) => {
        const w = f.b.state?.workItems[String(r.target)]
        const runs = f.b.runs.filter((x) => x.workItemId === r.target)
        const accepted = f.b.kinds.get('work.result.accepted') ?? 0
        return ok(w?.state === 'verified' && runs.length >= 2, {
          runs: runs.length,
          state: w?.state ?? 'none',
          acceptedInB: accepted,
        })
      }),
  },
  {
    id: 'fault.worker-restart.rebuilt',
    title: "The restarted Worker rebuilt its queues by replay: its local store knows both Missions' Groups again",
    run: (f) =>
      fault(f, 'worker-restart', () => {
        const store = agentStore(f, SHARED_WORKER)
        try {
          const groups = store.groups().map((g) => g.groupId)
          return ok(groups.includes(f.missions.a) && groups.includes(f.missions.b), {
            groups: groups.length,
            cursorB: store.cursor(f.missions.b) ?? 0,
          })
        } finally {
          store.close()
        }
      }),
  },
  {
    id: 'fault.worker-restart.new-session',
    title: 'The restarted Worker ran under a new, higher Session Epoch (its old session is fenced)',
    run: (f) =>
      fault(f, 'worker-restart', (r) => {
        const runs = allRuns(f).filter((x) => x.agentId === f.agentId(SHARED_WORKER))
        const before = Math.max(0, ...runs.filter((x) => x.startedAt < r.at).map((x) => x.sessionEpoch))
        const after = runs.filter((x) => x.startedAt > r.at).map((x) => x.sessionEpoch)
        return ok(before > 0 && after.length > 0 && Math.min(...after) > before, {
          sessionEpochBefore: before,
          sessionEpochAfter: after.length ? Math.min(...after) : 0,
        })
      }),
  },
  {
    id: 'fault.lease-expiry.reassigned',
    title: "The stopped Worker's lease lapsed and the WorkItem went to another Worker at a higher Ownership Epoch",
    run: (f) =>
      fault(f, 'lease-expiry', (r) => {
        const w = f.a.state?.workItems[String(r.target)]
        const by = ownerOf(f.a, w)
        return ok(
          Number(r.measured.ownershipEpochAfter) > Number(r.measured.ownershipEpochBefore) &&
            w?.state === 'verified' &&
            by !== f.agentId(A_WORKER),
          {...r.measured, completedBy: by ?? 'none'},
        )
      }),
  },
  {
    id: 'fault.worker-restart.same-owner',
    title:
      'The restarted Worker itself resumed its WorkItem under the same Ownership Epoch (it knew it owned it from replay)',
    run: (f) =>
      fault(f, 'worker-restart', (r) => {
        const w = f.b.state?.workItems[String(r.target)]
        return ok(
          w?.ownershipEpoch === Number(r.measured.ownershipEpochAtKill) && ownerOf(f.b, w) === f.agentId(SHARED_WORKER),
          {
            ownershipEpochAtKill: Number(r.measured.ownershipEpochAtKill),
            ownershipEpochAtEnd: w?.ownershipEpoch ?? 0,
          },
        )
      }),
  },
  {
    id: 'fault.lease-expiry.stopped',
    title: 'The old owner, once resumed, knew its lease had lapsed and sent no result under it',
    run: (f) =>
      fault(f, 'lease-expiry', (r) => {
        const old = f.agentId(A_WORKER)
        const late = f.a.lateResults.filter((l) => l.workItemId === r.target && l.agentId === old).length
        const refused = logs(f, A_WORKER).filter(
          (l) => l.event === 'command-refused' && (l.what === 'submit' || l.what === 'publish'),
        ).length
        return ok(late === 0 && refused === 0, {lateResults: late, refusedCommands: refused})
      }),
  },
  {
    id: 'fault.lease-expiry.fenced',
    title:
      'Nothing the old owner sent after its lease lapsed completed the WorkItem (a late result is kept as non-authoritative)',
    run: (f) =>
      fault(f, 'lease-expiry', (r) => {
        const old = f.agentId(A_WORKER)
        const late = f.a.lateResults.filter((l) => l.workItemId === r.target && l.agentId === old).length
        const fromOld = f.a.runs.filter(
          (x) => x.workItemId === r.target && x.agentId === old && x.outcome === 'submitted',
        ).length
        const accepted = ownerOf(f.a, f.a.state?.workItems[String(r.target)])
        return ok(accepted !== old, {lateResults: late, submittedByOldOwner: fromOld})
      }),
  },
  {
    id: 'fault.coordinator.replaced',
    title: "Mission A's Coordinator was killed, and only after its lease expired replaced at the next epoch",
    run: (f) =>
      fault(f, 'coordinator-replacement', (r) => {
        const lease = f.a.state?.mission.coordinator
        return ok(
          r.measured.signal === 'SIGKILL' &&
            Date.parse(String(r.measured.assignedAt)) > Date.parse(String(r.measured.leaseExpiredAt)) &&
            lease?.agentId === f.agentId('coordinator-3') &&
            lease.coordinatorEpoch === Number(r.measured.epochBefore) + 1,
          {...r.measured, epochAfter: lease?.coordinatorEpoch ?? 0},
        )
      }),
  },
  {
    id: 'fault.coordinator.handover',
    title:
      "The replacement's first act was a signed Mission-scoped Context Package of what it reconciled, before any assignment",
    run: (f) =>
      fault(f, 'coordinator-replacement', () => {
        const by = f.agentId('coordinator-3')
        const h = f.a.handovers.find((x) => x.actorId === by && x.coordinatorEpoch === 2)
        const firstAssignment = f.a.firstAssignment.get(by)
        return ok(
          h?.verified === true &&
            h.scope === 'mission' &&
            firstAssignment !== undefined &&
            h.sequence < firstAssignment,
          {
            handovers: f.a.handovers.length,
            verified: h?.verified ?? false,
            handoverSequence: h?.sequence ?? 0,
            firstAssignmentSequence: firstAssignment ?? 0,
          },
        )
      }),
  },
  {
    id: 'fault.coordinator.stale-refused',
    title: "The replaced Coordinator's Command under its old epoch was refused as stale",
    run: (f) =>
      fault(f, 'coordinator-replacement', (r) =>
        ok(r.measured.staleCommand === 'AUTH_STALE_COORDINATOR', {code: String(r.measured.staleCommand)}),
      ),
  },
  {
    id: 'fault.coordinator.reconciled',
    title: 'The replacement reconciled by replay: every planned WorkItem exists exactly once and the Mission finished',
    run: (f) =>
      fault(f, 'coordinator-replacement', () => {
        const instances = f
          .items(f.a)
          .map((w) => (w.contract.constraints?.plan as {instance?: string} | undefined)?.instance)
        const unique = new Set(instances)
        const byReplacement = logs(f, 'coordinator-3').filter(
          (l) => l.event === 'accepted' && l.groupId === f.missions.a,
        ).length
        return ok(unique.size === instances.length && f.a.state?.mission.state === 'approved' && byReplacement > 0, {
          workItems: instances.length,
          distinct: unique.size,
          commandsByReplacement: byReplacement,
        })
      }),
  },
  {
    id: 'fault.delivery.faulted',
    title: 'The delivery proxy really duplicated and reordered Events to the shared Worker and a Coordinator',
    run: (f) =>
      fault(f, 'delivery', (r) =>
        ok(
          Number(r.measured.duplicated) > 0 &&
            Number(r.measured.reordered) > 0 &&
            Number(r.measured.lateDuplicates) > 0,
          r.measured,
        ),
      ),
  },
  {
    id: 'fault.delivery.applied-once',
    title:
      'Under duplicated and reordered delivery, the shared Worker applied every Event once and in order (its Cursor is the Group head it may see)',
    run: (f) =>
      fault(f, 'delivery', () => {
        const store = agentStore(f, SHARED_WORKER)
        try {
          const behind = store.groups().filter((g) => (store.buffered(g.groupId) ?? []).length > 0).length
          const cursorB = store.cursor(f.missions.b) ?? 0
          return ok(behind === 0 && cursorB > 0, {groups: store.groups().length, bufferedGaps: behind, cursorB})
        } finally {
          store.close()
        }
      }),
  },
  {
    id: 'fault.disconnect.offline',
    title: 'The cut-off Worker went offline mid-run, kept working within its grace, and reconciled on reconnect',
    run: (f) =>
      fault(f, 'disconnection', (r) => {
        const l = logs(f, B_WORKER)
        const after = (e: string) => l.filter((x) => x.event === e && String(x.at) >= r.at).length
        return ok(Number(r.measured.dropped) > 0 && after('offline') > 0 && after('reconciled') > 0, {
          ...r.measured,
          offline: after('offline'),
          buffered: after('offline-buffered'),
          reconciled: after('reconciled'),
        })
      }),
  },
  {
    id: 'fault.disconnect.completed',
    title:
      'The WorkItem running during the cut was verified (by the same Worker, unless its lease lapsed meanwhile and it was reassigned)',
    run: (f) =>
      fault(f, 'disconnection', (r) => {
        const g = [...f.groups.values()].find((x) => x.state?.workItems[String(r.target)] !== undefined)
        const w = g?.state?.workItems[String(r.target)]
        // Under load the reconnection can come after the lease's end: the Coordinator then rightly
        // reassigns, and only the new owner's result counts. Either way exactly one result does.
        const by = g && w ? ownerOf(g, w) : undefined
        const sameOwner = w?.ownershipEpoch === 1 && by === f.agentId(B_WORKER)
        return ok(w?.state === 'verified' && (sameOwner || (w.ownershipEpoch > 1 && by !== undefined)), {
          state: w?.state ?? 'none',
          ownershipEpoch: w?.ownershipEpoch ?? 0,
          sameOwner,
        })
      }),
  },
  {
    id: 'fault.priority.preempted',
    title: "The urgent Mission's arrival preempted a running WorkItem of the busy shared Worker at a checkpoint",
    run: (f) =>
      fault(f, 'high-priority-arrival', (r) => {
        const {urgentRun, yielded} = preemption(f, r)
        return ok(Number(r.measured.busySlotsAtArrival) >= 2 && yielded.length > 0 && urgentRun !== undefined, {
          ...r.measured,
          preempted: yielded.length,
        })
      }),
  },
  {
    id: 'fault.priority.resumed',
    title: 'The preempted WorkItem resumed from its checkpoint after the urgent work started, and was verified',
    run: (f) =>
      fault(f, 'high-priority-arrival', (r) => {
        const {urgentRun, yielded} = preemption(f, r)
        const v = yielded[0]
        const resumed = v
          ? allRuns(f).find((x) => x.workItemId === v.workItemId && x.resumed && x.startedAt >= (v.endedAt ?? ''))
          : undefined
        const state = v ? f.groups.get(v.groupId)?.state?.workItems[v.workItemId]?.state : undefined
        return ok(
          resumed !== undefined &&
            urgentRun !== undefined &&
            urgentRun.startedAt <= resumed.startedAt &&
            state === 'verified',
          {resumedRuns: resumed ? 1 : 0, state: state ?? 'none'},
        )
      }),
  },
  {
    id: 'fault.priority.quota',
    title:
      "The urgent Group never ran more items at once on the shared Worker than its policy's quota, though it had more",
    run: (f) =>
      fault(f, 'high-priority-arrival', () => {
        const c = f.missions.c !== undefined ? f.groups.get(f.missions.c) : undefined
        const runs = (c?.runs ?? []).filter((x) => x.agentId === f.agentId(SHARED_WORKER))
        const items = new Set(runs.map((x) => x.workItemId)).size
        const most = maxConcurrency(runs)
        // The quota held something back: while an accepted urgent item waited, the shared Worker
        // started another Group's item — a slot the urgent Group's share would have taken at once.
        const shared = allRuns(f).filter((x) => x.agentId === f.agentId(SHARED_WORKER) && x.groupId !== c?.groupId)
        const startsWhileHeld = [...new Set(runs.map((x) => x.workItemId))].reduce((n, id) => {
          const accepted = c?.acceptedAt.get(id)
          const started = runs.find((x) => x.workItemId === id)?.startedAt
          if (!accepted || !started) return n
          return n + shared.filter((x) => x.startedAt > accepted && x.startedAt < started).length
        }, 0)
        return ok(items >= 2 && most <= URGENT_POLICY.quota && startsWhileHeld > 0, {
          quota: URGENT_POLICY.quota,
          items,
          maxConcurrent: most,
          otherStartsWhileHeld: startsWhileHeld,
        })
      }),
  },
  {
    id: 'fault.priority.policy-first',
    title:
      "The shared Worker took up the raised policy before the urgent Mission's first run (Organization policy, §11.1)",
    run: (f) =>
      fault(f, 'high-priority-arrival', (r) => {
        const {urgentRun} = preemption(f, r)
        const changed = logs(f, SHARED_WORKER).filter((l) => l.event === 'policy-changed' && String(l.at) >= r.at)
        const first = changed[0]
        return ok(first !== undefined && urgentRun !== undefined && String(first.at) <= urgentRun.startedAt, {
          policyChanges: changed.length,
          urgentRuns: urgentRun ? 1 : 0,
        })
      }),
  },
  {
    id: 'fault.priority.approved',
    title: 'The urgent Mission reached human Approval',
    run: (f) =>
      fault(f, 'high-priority-arrival', (r) => {
        const {c} = preemption(f, r)
        return ok(c?.state?.mission.state === 'approved', {state: c?.state?.mission.state ?? 'none'})
      }),
  },
]

/** The run a preemption ended on the shared Worker after the urgent arrival, and the urgent run. */
function preemption(f: Facts, r: FaultRecord) {
  const worker = f.agentId(SHARED_WORKER)
  const c = f.missions.c !== undefined ? f.groups.get(f.missions.c) : undefined
  const urgentRun = c?.runs.find((x) => x.agentId === worker)
  const yielded = allRuns(f).filter(
    (x) => x.agentId === worker && x.outcome === 'yielded' && Date.parse(x.endedAt ?? '') >= Date.parse(r.at),
  )
  return {c, urgentRun, yielded}
}

/** A check on one injected fault: fails when the fault was expected but not injected. */
function fault(f: Facts, id: FaultId, judge: (r: FaultRecord) => Verdict): Verdict {
  const r = f.faults.find((x) => x.id === id)
  if (r === undefined)
    return ok(!f.faultsExpected, {injected: false}, f.faultsExpected ? 'the fault was not injected' : 'faults off')
  if (r.error !== undefined) return ok(false, {injected: false}, r.error)
  return judge(r)
}

export async function evaluate(facts: PocFacts): Promise<TraceCheck[]> {
  let opened: ReturnType<typeof openAuthorityFromConfig> | undefined
  const f = lookups(facts, () => (opened ??= openAuthorityFromConfig(loadOrgConfig(facts.config))))
  const out: TraceCheck[] = []
  try {
    await runChecks(f, out)
  } finally {
    if (opened) await (await opened.catch(() => null))?.close()
  }
  return out
}

async function runChecks(f: Facts, out: TraceCheck[]): Promise<void> {
  for (const c of CHECKS) {
    try {
      const v = await c.run(f)
      out.push({id: c.id, title: c.title, ...v})
    } catch (e) {
      out.push({
        id: c.id,
        title: c.title,
        passed: false,
        measured: {},
        detail: `the check failed to run: ${(e as Error).message}`,
      })
    }
  }
}

export const CHECK_IDS = CHECKS.map((c) => c.id)

function lookups(p: PocFacts, authority: Facts['authority']): Facts {
  const a = p.groups.get(p.missions.a)!
  const b = p.groups.get(p.missions.b)!
  const childGroup = Object.values(a.state?.workItems ?? {}).find((w) => w.childMission)?.childMission?.groupId
  return {
    ...p,
    a,
    b,
    child: childGroup ? p.groups.get(childGroup) : undefined,
    agentId: (name) => `${p.organization}:agent:${name}`,
    proc: (name) => p.procs.find((x) => x.name === name),
    items: (g) => Object.values(g.state?.workItems ?? {}),
    stageOf: (w) => pocStage(w.contract.constraints)?.stage,
    authority,
  }
}

/** The log lines of every process that ran as `name` (a restarted Agent has two). */
const logs = (f: Facts, name: string) => f.procs.filter((p) => p.name === name).flatMap((p) => p.logs)
const coordinatorLogs = (f: Facts) => f.procs.filter((p) => p.name.startsWith('coordinator')).flatMap((p) => p.logs)

function ownerOf(g: GroupFacts, w: WorkItemView | undefined): string | undefined {
  if (w === undefined) return undefined
  return lastOf(g.runs, (r) => r.workItemId === w.workItemId && r.outcome === 'submitted')?.agentId
}

const allRuns = (f: Facts) => [...f.groups.values()].flatMap((g) => g.runs)

/** The most runs open at one instant. */
function maxConcurrency(runs: {startedAt: string; endedAt?: string}[]): number {
  const points = runs.flatMap((r) => [
    {t: Date.parse(r.startedAt), d: 1},
    {t: Date.parse(r.endedAt ?? r.startedAt), d: -1},
  ])
  points.sort((x, y) => x.t - y.t || x.d - y.d)
  let open = 0
  let max = 0
  for (const p of points) max = Math.max(max, (open += p.d))
  return max
}

function agentStore(f: Facts, name: string): AgentStore {
  const path = join(f.dir, 'org', 'agents', `${name}.db`)
  if (!existsSync(path)) throw new Error(`no local store ${path}`)
  return AgentStore.open(path, {agentId: f.agentId(name)})
}

/** Where the run's authority kept Artifact bytes: beside a SQLite store, else the run's directory (run.ts). */
function artifactDirOf(f: Facts): string {
  return artifactDirFor(loadOrgConfig(f.config).store) ?? join(f.dir, 'artifacts')
}

const same = (x: readonly string[], y: readonly string[]) => [...x].sort().join() === [...y].sort().join()

/** `project/path` → content hash of every file the pure generators make for `seed`. */
function expectedFiles(seed: number): Map<string, string> {
  const out = new Map<string, string>()
  for (const project of Object.values(PROJECTS)) {
    const req = requirements(project, seed)
    const parsed = parseRequirements(String(req[REQUIREMENTS_PATH]))
    if (parsed === null) throw new Error(`the ${project.name} generator made unreadable requirements`)
    const files = {...req, ...tests(parsed), ...implement(parsed, project), ...docs(parsed, project)}
    for (const [path, text] of Object.entries(files)) out.set(`${project.name}/${path}`, contentHashOf(text))
  }
  return out
}

const contentHashOf = (text: string | Uint8Array) => contentHash(typeof text === 'string' ? Buffer.from(text) : text)
