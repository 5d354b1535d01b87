// Deliberately broken runtimes for `mwp poc run --self-test`: each name switches one behaviour of
// the Agent or Coordinator runtime to a known-wrong one, in the processes the self-test starts
// with MWP_POC_MUTANT set, so that the proof of concept's checks can show they catch it. Nothing
// reads this unless that variable names a mutant; it is read once, at start.
//
// A hook stays next to the behaviour it breaks, as one `if (mutated('…'))`, so each broken
// runtime differs from the real one in exactly one place.

export const MUTANTS = {
  'review-accepts-anything': "the Coordinator's review accepts every submission without running its checks",
  'planner-ignores-dependencies': 'the Coordinator authorizes a WorkItem before its dependencies are verified',
  'offer-to-author': 'the Coordinator offers a review to the author of the work it reviews',
  'replay-projects-nothing': "an Agent's replay from an empty local database projects no WorkItem",
  'cursor-never-acked': 'the Agent never acknowledges its Cursor to the authority',
  'preempt-unsafe': 'preemption kills the running slot instead of waiting for its safe checkpoint',
  'stale-lease-local': 'an Agent that lost its Execution Lease goes on and submits under it',
  'no-session-fencing': 'a restarted Agent keeps sending under its first Session Epoch',
  'rework-without-findings': "the Coordinator sends rejected work back without the review's findings",
  'coordinator-no-renewal': 'the Coordinator never bounds or renews its Coordinator lease',
  'cursor-over-gaps': "an Agent's client moves its Cursor over a gap when a later Event arrives first",
  'ignored-quotas': "the Worker drops each Group's quota of running items from its scheduling policy",
  'slot-leaks-context': "a Worker's slots share one working directory, so one Group's files reach another Group's run",
} as const

export type Mutant = keyof typeof MUTANTS

const ACTIVE = process.env.MWP_POC_MUTANT

/** True in a process started as the broken runtime `m`. */
export const mutated = (m: Mutant): boolean => ACTIVE === m
