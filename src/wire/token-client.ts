// The client side of the Authorization Service (spec §12; server: token-routes.ts): a Worker asks
// for the capability token of its current execution over HTTPS with its session's token, and a
// tool service fetches the public key it verifies tokens with. The answer's token is a secret
// (ACCEPTANCE G3): callers hand it to the work that needs it and nowhere else.

import type {CapabilityClaims} from '../authz/token.js'
import type {TokenRequest} from '../authz/issuer.js'
import {decodeBase64url} from '../json/base64url.js'
import {type HttpsSession, exchange, refusal} from './https-exchange.js'
import {KEY_ROUTE, type AuthzKey, tokenPath} from './token-routes.js'

/** What the caller sends: groupId and workItemId are the path's, the caller is the session's. */
export type TokenAsk = Omit<TokenRequest, 'groupId' | 'workItemId' | 'agentId'>

export interface IssuedToken {
  token: string
  expiresAt: string
  claims: CapabilityClaims
}

/** A token for the session's current execution of the WorkItem; a refusal rejects with its §19 code (WireError). */
export async function requestToken(
  session: HttpsSession,
  groupId: string,
  workItemId: string,
  ask: TokenAsk,
): Promise<IssuedToken> {
  const bytes = Buffer.from(JSON.stringify(ask), 'utf8')
  const answer = await exchange(session, 'POST', tokenPath(groupId, workItemId), {
    bytes,
    contentType: 'application/json',
  })
  if (answer.status !== 200) throw refusal(answer)
  return JSON.parse(answer.body.toString('utf8')) as IssuedToken
}

/** The Authorization Service's key as served, with its public key decoded. */
export async function fetchAuthzKey(
  session: Omit<HttpsSession, 'token'>,
): Promise<Omit<AuthzKey, 'publicKey'> & {publicKey: Uint8Array}> {
  const answer = await exchange(session, 'GET', KEY_ROUTE)
  if (answer.status !== 200) throw refusal(answer)
  const served = JSON.parse(answer.body.toString('utf8')) as AuthzKey
  const publicKey = decodeBase64url(served.publicKey)
  if (publicKey === null || publicKey.length !== 32) throw new Error('the served public key is not 32 base64url bytes')
  return {...served, publicKey}
}
