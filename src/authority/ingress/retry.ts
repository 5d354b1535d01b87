// A moved Group head or Organization-log version means another process wrote first (or an earlier
// append of the Group's pipeline failed, append-pipeline.ts): ingress decides again on fresh state.
// A few attempts settle contention; past them the actor gets INTERNAL_ERROR (retryable), with
// nothing accepted that its receipt lookup would not find.

/** Decide again: the head or version the attempt decided on moved. */
export const RETRY = 'retry'
export type Retry = typeof RETRY

export const MAX_ATTEMPTS = 5

/** Runs `attempt` until it answers, at most MAX_ATTEMPTS times; then `exhausted()`. */
export async function untilAnswered<T>(attempt: () => Promise<T | Retry>, exhausted: () => T): Promise<T> {
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const answer = await attempt()
    if (answer !== RETRY) return answer
  }
  return exhausted()
}
