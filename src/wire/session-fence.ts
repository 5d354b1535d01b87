// §6.3 on this server: issuing Session Epoch n + 1 invalidates every session of that Agent at n or
// lower, and a superseded session keeps nothing — no subscriptions, no deliveries. Each accepted
// Agent connection is registered with its epoch; a newer one fences the older ones at once
// (Connection.fence). Sessions opened by another process sharing the store are caught by the
// connection itself, which compares its epoch with the store's on every frame and every liveness
// tick (connection.ts).

/** What the fence needs of a connection. */
export interface FencedSession {
  readonly sessionEpoch: number | undefined
  /** Stops every subscription of the session and tells its peer; idempotent. */
  fence(): void
}

export class SessionFence {
  readonly #live = new Map<string, Set<FencedSession>>()

  /**
   * `session` of `agentId` was issued its epoch: every live session of the Agent below it is fenced.
   * HELLOs finish in any order, so a session issued an epoch below a live one is fenced itself.
   */
  issued(agentId: string, session: FencedSession): void {
    const epoch = session.sessionEpoch ?? 0
    let live = this.#live.get(agentId)
    if (!live) this.#live.set(agentId, (live = new Set()))
    for (const other of [...live]) {
      if ((other.sessionEpoch ?? 0) < epoch) {
        live.delete(other)
        other.fence()
      } else if ((other.sessionEpoch ?? 0) > epoch) {
        return session.fence()
      }
    }
    live.add(session)
  }

  /** The session's connection closed (or was fenced by the connection itself). */
  closed(agentId: string, session: FencedSession): void {
    const live = this.#live.get(agentId)
    live?.delete(session)
    if (live?.size === 0) this.#live.delete(agentId)
  }
}
