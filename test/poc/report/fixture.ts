// A realistic PoC trace for the report's tests: two concurrent Missions (6 and 4 WorkItems, one
// of them promoted to a child Mission of 2), three Workers with 1–2 slots, 24 runs (some
// yielded, one lost to a fault), marks of every kind, 62 checks of which one failed, and a
// self-test of 10 mutants of which one went uncaught. Built fresh on each call, so a test may
// change it.

import type {PocTrace, TraceCheck, TraceMark, TraceRun} from '../../../src/poc/report/trace.js'

const START = Date.parse('2026-12-03T10:00:00.000Z')
const at = (s: number) => new Date(START + s * 1000).toISOString()

export const GROUP_A = 'grp-a-7f3c'
export const GROUP_B = 'grp-b-19d2'
export const GROUP_C = 'grp-c-5e80'

const G = {A: GROUP_A, B: GROUP_B, C: GROUP_C}

// [agent, slot, group, workItemId, start s, end s, outcome]
const RUNS: [string, number, keyof typeof G, string, number, number, TraceRun['outcome']][] = [
  ['worker-1', 0, 'A', 'a1', 2, 30, 'submitted'],
  ['worker-2', 0, 'B', 'b1', 3, 25, 'submitted'],
  ['worker-3', 0, 'B', 'b3', 28, 50, 'yielded'],
  ['worker-1', 1, 'B', 'b2', 30, 64, 'submitted'],
  ['worker-2', 0, 'A', 'a2', 32, 70, 'submitted'],
  ['worker-3', 1, 'A', 'a3', 34, 52, 'blocked'],
  ['worker-1', 0, 'B', 'b3', 52, 75, 'submitted'],
  ['worker-3', 0, 'C', 'c1', 54, 80, 'submitted'],
  ['worker-2', 0, 'A', 'a2', 74, 96, 'submitted'],
  ['worker-1', 1, 'B', 'b2', 80, 104, 'submitted'],
  ['worker-3', 0, 'C', 'c2', 82, 100, 'lost'],
  ['worker-3', 1, 'B', 'b4', 90, 100, 'lost'],
  ['worker-1', 0, 'A', 'a5', 98, 118, 'yielded'],
  ['worker-2', 0, 'B', 'b4', 106, 128, 'submitted'],
  ['worker-3', 0, 'C', 'c2', 112, 135, 'submitted'],
  ['worker-1', 0, 'A', 'a5', 120, 140, 'failed'],
  ['worker-3', 1, 'A', 'a3', 138, 146, 'submitted'],
  ['worker-1', 1, 'A', 'a4', 138, 150, 'yielded'],
  ['worker-3', 1, 'A', 'a5', 148, 170, 'submitted'],
  ['worker-1', 1, 'A', 'a4', 152, 180, 'submitted'],
  ['worker-2', 0, 'B', 'b4', 162, 178, 'submitted'],
  ['worker-2', 0, 'A', 'a6', 182, 190, 'yielded'],
  ['worker-1', 0, 'A', 'a6', 192, 212, 'submitted'],
  ['worker-3', 0, 'B', 'b3', 140, 147, 'submitted'],
]

type Group = keyof typeof G
const MARKS: [number, TraceMark['kind'], string, string?, Group?][] = [
  [0.5, 'epoch', 'coordinator epoch 1', 'coordinator'],
  [50, 'preemption', 'b3 yields to a3 (weight 3:1)', 'worker-3', 'B'],
  [72, 'rejection', 'a2 result rejected: no tests', undefined, 'A'],
  [100, 'fault', 'SIGKILL worker-3', 'worker-3'],
  [118, 'preemption', 'a5 yields to b4', 'worker-1', 'A'],
  [125, 'fault', 'drop authority link 3 s'],
  [127, 'fault', 'SIGKILL coordinator', 'coordinator'],
  [131, 'epoch', 'coordinator epoch 2 (failover)', 'coordinator'],
  [138, 'approval', 'alice approves child C', 'alice', 'C'],
  [142, 'reassignment', 'a5 → worker-3', 'worker-3', 'A'],
  [150, 'preemption', 'a4 yields to b4', 'worker-1', 'A'],
  [158, 'change-request', 'alice: B needs a changelog entry', 'alice', 'B'],
  [191, 'reassignment', 'a6 → worker-1', 'worker-1', 'A'],
  [200, 'approval', 'alice approves B', 'alice', 'B'],
  [215, 'approval', 'alice approves A', 'alice', 'A'],
]

// 62 check ids, as `mwp poc run` names them: area.what.
const CHECK_IDS = [
  ...[
    'no-starvation',
    'slot-limit',
    'weighted-share',
    'preempt-latency',
    'priority-order',
    'fair-resume',
    'queue-bound',
  ].map((s) => `sched.${s}`),
  ...['single-owner', 'renewal', 'expiry-fences', 'epoch-monotonic', 'handover', 'no-double-start'].map(
    (s) => `lease.${s}`,
  ),
  ...[
    'stale-owner-rejected',
    'stale-coordinator-rejected',
    'stale-session-rejected',
    'revision-conflict',
    'idempotent-retry',
  ].map((s) => `fence.${s}`),
  ...[
    'worker-kill-recovered',
    'coordinator-failover',
    'link-drop-resumed',
    'lost-run-reoffered',
    'no-lost-events',
    'restart-replay',
  ].map((s) => `fault.${s}`),
  ...[
    'human-owner',
    'child-approval-evidence',
    'change-request-rework',
    'no-reopen',
    'approval-signed',
    'approval-order',
  ].map((s) => `approval.${s}`),
  ...['every-rejection-audited', 'reason-codes', 'no-secrets', 'append-only', 'hash-chain'].map((s) => `audit.${s}`),
  ...['mission-limit', 'child-allocation', 'charge-per-run', 'no-overspend'].map((s) => `budget.${s}`),
  ...['deps-respected', 'no-cycles', 'child-link-both-ways', 'blocked-while-child', 'rework-bounded'].map(
    (s) => `dag.${s}`,
  ),
  ...['log-verifies', 'replay-identical', 'cursor-resume', 'backpressure', 'schema-valid', 'signatures-valid'].map(
    (s) => `store.${s}`,
  ),
  ...[
    'tls13-only',
    'frame-limits',
    'rate-limited',
    'unknown-critical-refused',
    'version-negotiated',
    'auth-required',
  ].map((s) => `wire.${s}`),
  ...[
    'both-approved',
    'definition-of-done',
    'deadline-met',
    'artifacts-hashed',
    'evidence-linked',
    'timeline-complete',
  ].map((s) => `mission.${s}`),
]

function checks(): TraceCheck[] {
  return CHECK_IDS.map((id, i): TraceCheck => {
    if (id === 'sched.weighted-share')
      return {
        id,
        title: 'Slot time follows the Missions’ weights',
        passed: false,
        measured: {shareA: 0.7124, shareB: 0.2876, target: 0.6, tolerance: 0.1, runs: 24},
        detail: 'Mission A held 71.2% of Worker slot time; its weight gives 60% ± 10%.',
      }
    const [area, what] = id.split('.') as [string, string]
    return {
      id,
      title: `${area}: ${what.replaceAll('-', ' ')}`,
      passed: true,
      measured:
        i % 3 === 0 ? {observed: i * 3, limit: i * 4} : i % 3 === 1 ? {events: 400 + i, ok: true} : {p95_ms: 12.5 + i},
      ...(i % 5 === 0 ? {detail: 'Held over every Group of the run.'} : {}),
    }
  })
}

export function buildFixture(): PocTrace {
  return {
    seed: 424242,
    store: 'sqlite',
    startedAt: at(0),
    endedAt: at(220),
    missions: [
      {
        missionId: 'msn-a-01',
        groupId: GROUP_A,
        title: 'Ship the invoice export API',
        state: 'approved',
        approvedAt: at(215),
        workItems: [
          {
            workItemId: 'a1',
            title: 'Design the export schema',
            stage: 'design',
            state: 'verified',
            dependsOn: [],
            owner: 'worker-1',
            attempts: 1,
          },
          {
            workItemId: 'a2',
            title: 'Implement the CSV writer',
            stage: 'implement',
            state: 'verified',
            dependsOn: ['a1'],
            owner: 'worker-2',
            attempts: 2,
          },
          {
            workItemId: 'a3',
            title: 'Render invoices as PDF',
            stage: 'implement',
            state: 'verified',
            dependsOn: ['a1'],
            owner: 'worker-3',
            attempts: 1,
            childMissionId: 'msn-c-01',
          },
          {
            workItemId: 'a4',
            title: 'Integration tests',
            stage: 'test',
            state: 'verified',
            dependsOn: ['a2', 'a3'],
            owner: 'worker-1',
            attempts: 2,
          },
          {
            workItemId: 'a5',
            title: 'Security review of the export',
            stage: 'review',
            state: 'verified',
            dependsOn: ['a2'],
            owner: 'worker-3',
            attempts: 3,
          },
          {
            workItemId: 'a6',
            title: 'Release notes',
            stage: 'docs',
            state: 'verified',
            dependsOn: ['a4', 'a5'],
            owner: 'worker-1',
            attempts: 2,
          },
        ],
      },
      {
        missionId: 'msn-b-01',
        groupId: GROUP_B,
        title: 'Fix the flaky login flow',
        state: 'approved',
        approvedAt: at(200),
        workItems: [
          {
            workItemId: 'b1',
            title: 'Reproduce the flake',
            stage: 'investigate',
            state: 'verified',
            dependsOn: [],
            owner: 'worker-2',
            attempts: 1,
          },
          {
            workItemId: 'b2',
            title: 'Patch the session refresh',
            stage: 'implement',
            state: 'verified',
            dependsOn: ['b1'],
            owner: 'worker-1',
            attempts: 2,
          },
          {
            workItemId: 'b3',
            title: 'Add a regression test',
            stage: 'test',
            state: 'verified',
            dependsOn: ['b1'],
            owner: 'worker-3',
            attempts: 3,
          },
          {
            workItemId: 'b4',
            title: 'Review and merge',
            stage: 'review',
            state: 'verified',
            dependsOn: ['b2', 'b3'],
            owner: 'worker-2',
            attempts: 3,
          },
        ],
      },
      {
        missionId: 'msn-c-01',
        groupId: GROUP_C,
        title: 'PDF rendering (child of a3)',
        parentMissionId: 'msn-a-01',
        state: 'approved',
        approvedAt: at(138),
        workItems: [
          {
            workItemId: 'c1',
            title: 'Pick a PDF library',
            stage: 'design',
            state: 'verified',
            dependsOn: [],
            owner: 'worker-3',
            attempts: 1,
          },
          {
            workItemId: 'c2',
            title: 'Template the invoice',
            stage: 'implement',
            state: 'verified',
            dependsOn: ['c1'],
            owner: 'worker-3',
            attempts: 2,
          },
        ],
      },
    ],
    agents: [
      {agentId: 'agt-coord', name: 'coordinator', role: 'coordinator', slots: 1},
      {agentId: 'agt-alice', name: 'alice', role: 'human', slots: 0},
      {agentId: 'agt-w1', name: 'worker-1', role: 'worker', slots: 2},
      {agentId: 'agt-w2', name: 'worker-2', role: 'worker', slots: 1},
      {agentId: 'agt-w3', name: 'worker-3', role: 'worker', slots: 2},
    ],
    runs: RUNS.map(([agent, slot, g, workItemId, s, e, outcome]) => ({
      agent,
      slot,
      groupId: G[g],
      workItemId,
      startedAt: at(s),
      endedAt: at(e),
      outcome,
    })),
    marks: MARKS.map(([s, kind, label, agent, g]) => ({
      at: at(s),
      kind,
      label,
      ...(agent ? {agent} : {}),
      ...(g ? {groupId: G[g]} : {}),
    })),
    checks: checks(),
    selfTest: [
      {
        mutant: 'skip-fence',
        description: 'the authority accepts a stale owner’s submit',
        caughtBy: ['fence.stale-owner-rejected', 'lease.single-owner'],
      },
      {
        mutant: 'no-preempt',
        description: 'the scheduler never yields a slot',
        caughtBy: ['sched.preempt-latency', 'sched.weighted-share'],
      },
      {mutant: 'drop-audit', description: 'rejections are not audited', caughtBy: ['audit.every-rejection-audited']},
      {
        mutant: 'reopen-approved',
        description: 'an approved Mission accepts a new WorkItem',
        caughtBy: ['approval.no-reopen'],
      },
      {
        mutant: 'ignore-deps',
        description: 'a WorkItem starts before its dependencies verify',
        caughtBy: ['dag.deps-respected'],
      },
      {
        mutant: 'lose-lease-expiry',
        description: 'expired leases are never fenced',
        caughtBy: ['lease.expiry-fences', 'fault.lost-run-reoffered'],
      },
      {mutant: 'double-charge', description: 'a retried run is charged twice', caughtBy: ['budget.charge-per-run']},
      {mutant: 'jitterless-renewal', description: 'lease renewals fire all at once', caughtBy: []},
      {
        mutant: 'skip-child-link',
        description: 'the child Mission does not link back to its WorkItem',
        caughtBy: ['dag.child-link-both-ways'],
      },
      {
        mutant: 'stale-epoch',
        description: 'the old coordinator keeps assigning after failover',
        caughtBy: ['fence.stale-coordinator-rejected', 'fault.coordinator-failover'],
      },
    ],
  }
}
