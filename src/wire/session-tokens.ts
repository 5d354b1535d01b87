// The session tokens this server issued in HELLO server_accept, for the HTTPS routes beside the
// WebSocket binding (artifact-routes.ts): `Authorization: Bearer <sessionToken>` speaks for the
// principal of a live session. A token is bound to its connection, principal, Session Epoch and
// expiry; it stops working when the connection closes, when the session is fenced by a newer epoch
// of the same Agent (§6.3, on this server or — checked at use — another process sharing the store),
// and at its expiry by the Authority's clock.

import {compareTimestampText} from '../json/timestamp.js'
import type {Principal} from '../signing/profiles.js'

/** What a token needs of its session. */
export interface TokenSession {
  readonly principal: Principal | null
  readonly sessionEpoch: number | undefined
  /** Whether the session still speaks for its principal: open, not fenced, not superseded. */
  live(): Promise<boolean>
}

interface Issued {
  session: TokenSession
  /** RFC 3339 UTC, the same instant as server_accept's expiresAt. */
  expiresAt: string
}

export class SessionTokens {
  readonly #issued = new Map<string, Issued>()

  constructor(private readonly clock: () => string) {}

  issue(token: string, session: TokenSession, expiresAt: string): void {
    this.#issued.set(token, {session, expiresAt})
  }

  /** The session closed or was fenced: its token is gone at once. */
  revoke(token: string | undefined): void {
    if (token !== undefined) this.#issued.delete(token)
  }

  /** The principal `token` speaks for now, or null: unknown, expired, closed, fenced or superseded. */
  async principalOf(token: string): Promise<Principal | null> {
    return (await this.sessionOf(token))?.principal ?? null
  }

  /** The live session `token` speaks for (its principal and Session Epoch), or null as for principalOf. */
  async sessionOf(token: string): Promise<TokenSession | null> {
    const issued = this.#issued.get(token)
    if (!issued) return null
    if (compareTimestampText(this.clock(), issued.expiresAt) >= 0) {
      this.#issued.delete(token)
      return null
    }
    if (!(await issued.session.live())) {
      this.#issued.delete(token)
      return null
    }
    return issued.session
  }

  get size(): number {
    return this.#issued.size
  }
}
