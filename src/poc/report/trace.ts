// What `mwp poc run` records and the report reads: the two Missions, their Agents, every slot's
// occupancy, the marks (faults, approvals, ...) and the evaluated checks. The run fills it; the
// report (html.ts, terminal.ts) only reads it, and write.ts stores it as report.json. Titles and
// labels come from Agents, so every renderer treats each string as untrusted text.

export interface PocTrace {
  seed: number
  store: string // 'sqlite' | 'postgres'
  startedAt: string // RFC 3339
  endedAt: string
  missions: TraceMission[]
  agents: TraceAgent[]
  runs: TraceRun[] // slot occupancy intervals
  marks: TraceMark[] // faults, preemptions, approvals, change requests, rejections, reassignments
  checks: TraceCheck[]
  selfTest?: SelfTestResult[] // only with --self-test
}

export interface TraceMission {
  missionId: string
  groupId: string
  title: string
  parentMissionId?: string
  state: string // active | awaiting_approval | approved | ...
  approvedAt?: string
  /** The approved Artifact set, by file name: a fault-free run with the same seed approves the same hashes. */
  approvedArtifacts?: {name: string; hash: string}[]
  workItems: TraceWorkItem[]
}

export interface TraceWorkItem {
  workItemId: string
  title: string
  stage: string
  state: string
  dependsOn: string[] // workItemIds
  owner?: string // agent name
  attempts: number // offers/rework rounds it took
  childMissionId?: string
}

export interface TraceAgent {
  agentId: string
  name: string
  role: 'coordinator' | 'worker' | 'human'
  slots: number
}

export interface TraceRun {
  agent: string
  slot: number
  groupId: string
  workItemId: string
  startedAt: string
  endedAt: string
  outcome: 'submitted' | 'yielded' | 'failed' | 'blocked' | 'lost'
}

export interface TraceMark {
  at: string
  kind: 'fault' | 'preemption' | 'approval' | 'change-request' | 'rejection' | 'reassignment' | 'epoch'
  label: string
  agent?: string
  groupId?: string
}

export interface TraceCheck {
  id: string // e.g. 'sched.weighted-share'
  title: string
  passed: boolean
  measured: Record<string, number | string | boolean>
  detail?: string
}

export interface SelfTestResult {
  mutant: string
  description: string
  caughtBy: string[] // failing check ids; [] = not caught
}
