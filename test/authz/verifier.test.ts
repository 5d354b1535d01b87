// A tool service verifies capability tokens (spec §12, §11.3; ACCEPTANCE G2): tokens issued by the
// Authorization Service for a real WorkItem execution, checked offline against the service key,
// an injected clock, a revocation list, the operation and resource asked for and a usage meter,
// and online through leaseCheck against the Group Authority's state.

import {describe, expect, it} from 'vitest'
import {signEd25519, strictVerify} from '../../src/crypto/ed25519.js'
import {generateSigningKey} from '../../src/crypto/keyfile.js'
import {plusSeconds} from '../../src/authority/model/work-leases.js'
import {REJECTION_CODES, type VerifyOptions, verifyToken} from '../../src/authz/verifier.js'
import {type CapabilityClaims, encodeToken} from '../../src/authz/token.js'
import {decodeBase64url, encodeBase64url} from '../../src/json/base64url.js'
import {canonicalBytes} from '../../src/json/jcs.js'
import {coord} from '../support/authority-helpers.js'
import {MAIL, REPO, authzKey, authzSuite} from '../support/authz-helpers.js'

const {s, driver, now, group, token, checkpoint, restart, run} = authzSuite()

/** verifyToken for a repository read at the service's current time, with the service's revocation list and lease check. */
const check = (t: string, extra: Partial<VerifyOptions> = {}) =>
  verifyToken(t, {
    publicKey: s.service.publicKey,
    now: now(),
    operation: 'read',
    resource: REPO,
    revoked: (id) => s.service.revoked(id),
    leaseCheck: (claims) => s.service.leaseStatus(claims, now()),
    ...extra,
  })
const rejectionOf = async (p: ReturnType<typeof check>) => {
  const r = await p
  return r.ok ? 'ok' : `${r.rejection}/${r.code}`
}

/** `token` with one byte of its claims or signature changed (then re-encoded, so the framing stays canonical). */
function tampered(t: string, part: 0 | 1): string {
  const parts = t.split('.')
  const bytes = Buffer.from(decodeBase64url(parts[part]!)!)
  bytes[10] = bytes[10]! ^ 0x01
  parts[part] = encodeBase64url(bytes)
  return parts.join('.')
}

describe('verifyToken', () => {
  it('accepts a good token for each allowed operation, and rejects a tampered one (one byte of claims or signature)', async () => {
    const g = await group('good')
    const w = await driver.drive(g, 'active')
    const {token: t, claims} = await token(g, w)
    const ok = await check(t)
    expect(ok).toEqual({ok: true, claims})
    expect(await rejectionOf(check(t, {operation: 'write'}))).toBe('ok')
    expect(await rejectionOf(check(t, {operation: 'send', resource: MAIL}))).toBe('ok')

    expect(await rejectionOf(check(tampered(t, 0)))).toBe('bad-signature/AUTH_INVALID_SIGNATURE')
    expect(await rejectionOf(check(tampered(t, 1)))).toBe('bad-signature/AUTH_INVALID_SIGNATURE')
    // Another Authorization Service's key does not verify it.
    const other = generateSigningKey({
      keyId: 'urn:mwp:dev:key:other-authz',
      principal: {type: 'service', id: 'urn:mwp:dev:service:other'},
    })
    expect(await rejectionOf(check(t, {publicKey: other.publicKey}))).toBe('bad-signature/AUTH_INVALID_SIGNATURE')
    // Bad framing.
    for (const bad of ['', 'abc', `${t}.x`, t.replace('.', '.=')])
      expect(await rejectionOf(check(bad))).toBe('malformed/PROTOCOL_VIOLATION')
  })

  it('is domain-separated: its signature is not one over the bare JCS claims, and a bare-JCS signature is no token', async () => {
    const g = await group('domain')
    const w = await driver.drive(g, 'active')
    const {token: t, claims} = await token(g, w)
    const [body, sig] = t.split('.')
    const bare = canonicalBytes(claims)
    expect(Buffer.from(decodeBase64url(body!)!).equals(bare)).toBe(true)
    // What a Signed Document's signature would cover: the JCS bytes alone.
    expect(strictVerify(authzKey.publicKey, bare, decodeBase64url(sig!)!).ok).toBe(false)
    const forged = `${body}.${encodeBase64url(signEd25519(authzKey.seed, bare))}`
    expect(await rejectionOf(check(forged))).toBe('bad-signature/AUTH_INVALID_SIGNATURE')
    // A correctly signed body that is not canonical JCS, or not the claims shape, is malformed.
    const signedBy = (c: unknown) => encodeToken(c as CapabilityClaims, authzKey)
    expect(await rejectionOf(check(signedBy({...claims, typ: 'something-else/1'})))).toBe(
      'malformed/PROTOCOL_VIOLATION',
    )
    expect(await rejectionOf(check(signedBy({...claims, ownershipEpoch: -1})))).toBe('malformed/PROTOCOL_VIOLATION')
  })

  it('rejects an expired token (injected clock: at its expiry, exclusive) and one not yet valid', async () => {
    const g = await group('expired')
    const w = await driver.drive(g, 'active')
    const {token: t, claims} = await token(g, w, {ttlSeconds: 60})
    const noLease = {leaseCheck: undefined}
    expect(await rejectionOf(check(t, {...noLease, now: plusSeconds(claims.expiresAt, -1)}))).toBe('ok')
    expect(await rejectionOf(check(t, {...noLease, now: claims.expiresAt}))).toBe('expired/AUTH_INVALID_SIGNATURE')
    expect(await rejectionOf(check(t, {...noLease, now: plusSeconds(claims.expiresAt, 3600)}))).toBe(
      'expired/AUTH_INVALID_SIGNATURE',
    )
    expect(await rejectionOf(check(t, {...noLease, now: plusSeconds(claims.issuedAt, -1)}))).toBe(
      'not-yet-valid/AUTH_INVALID_SIGNATURE',
    )
  })

  it('rejects a revoked token, leaving other tokens of the same lease valid', async () => {
    const g = await group('revoked')
    const w = await driver.drive(g, 'active')
    const first = await token(g, w)
    const second = await token(g, w)
    expect(first.claims.tokenId).not.toBe(second.claims.tokenId)
    s.service.revoke(first.claims.tokenId)
    expect(await rejectionOf(check(first.token))).toBe('revoked/AUTH_FORBIDDEN')
    expect(await rejectionOf(check(second.token))).toBe('ok')
  })

  it('rejects a wrong operation and a wrong resource (also one narrowed away at issue)', async () => {
    const g = await group('mismatch')
    const w = await driver.drive(g, 'active')
    const {token: t} = await token(g, w)
    expect(await rejectionOf(check(t, {operation: 'delete'}))).toBe('wrong-operation/AUTH_FORBIDDEN')
    expect(await rejectionOf(check(t, {operation: 'read', resource: MAIL}))).toBe('wrong-operation/AUTH_FORBIDDEN')
    expect(await rejectionOf(check(t, {resource: 'urn:mwp:dev:tool:payments'}))).toBe('wrong-resource/AUTH_FORBIDDEN')
    const narrow = await token(g, w, {grants: [{resource: REPO, operations: ['read']}]})
    expect(await rejectionOf(check(narrow.token))).toBe('ok')
    expect(await rejectionOf(check(narrow.token, {operation: 'write'}))).toBe('wrong-operation/AUTH_FORBIDDEN')
    expect(await rejectionOf(check(narrow.token, {operation: 'send', resource: MAIL}))).toBe(
      'wrong-resource/AUTH_FORBIDDEN',
    )
  })

  it("rejects a call whose cost would take the meter's cumulative usage past the token's limits; the exact limit is allowed", async () => {
    const g = await group('budget')
    const w = await driver.drive(g, 'active')
    const {token: t, claims} = await token(g, w)
    expect(claims.limits).toMatchObject({currency: 'EUR', financialLimit: 10, toolCallLimit: 5})
    const meter = (used: Record<string, unknown>, cost: Record<string, unknown>) => ({usage: () => ({used, cost})})
    expect(await rejectionOf(check(t, meter({toolCalls: 4}, {toolCalls: 1})))).toBe('ok')
    expect(await rejectionOf(check(t, meter({toolCalls: 5}, {toolCalls: 1})))).toBe('over-budget/BUDGET_EXCEEDED')
    // Money sums exactly: 9.9 + 0.1 is the limit 10, not above it.
    const eur = (financial: number) => ({currency: 'EUR', financial})
    expect(await rejectionOf(check(t, meter(eur(9.9), eur(0.1))))).toBe('ok')
    expect(await rejectionOf(check(t, meter(eur(9.9), eur(0.11))))).toBe('over-budget/BUDGET_EXCEEDED')
    expect(await rejectionOf(check(t, meter({}, {currency: 'USD', financial: 1})))).toBe(
      'currency-mismatch/INVALID_COMMAND',
    )
    expect(REJECTION_CODES['over-budget']).toBe('BUDGET_EXCEEDED')
  })

  it('rejects, through leaseCheck, a token issued under lease L once L was released by a checkpoint — also after a new lease starts', async () => {
    const g = await group('lease')
    const w = await driver.drive(g, 'active')
    const {token: t} = await token(g, w)
    expect(await rejectionOf(check(t))).toBe('ok')
    await checkpoint(g, w)
    expect(await rejectionOf(check(t))).toBe('lease-ended/WORK_LEASE_EXPIRED')
    await restart(g, w)
    expect(await rejectionOf(check(t))).toBe('lease-ended/WORK_LEASE_EXPIRED')
    // Offline, without leaseCheck, only the signature, clock and scope are checked.
    expect(await rejectionOf(check(t, {leaseCheck: undefined}))).toBe('ok')
    // The new lease's token is live; a work.cancel then revokes it (G7).
    const {token: fresh} = await token(g, w)
    expect(await rejectionOf(check(fresh))).toBe('ok')
    await run(coord('work.cancel', g, {workItemId: w, reason: 'no longer needed'}))
    expect(await rejectionOf(check(fresh))).toBe('lease-ended/WORK_LEASE_EXPIRED')
  })
})
