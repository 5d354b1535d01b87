// What the caller hands to openAuthority and startServer stays the caller's: the server requires
// Agent sessions (§6.3) on a view of the Authority it was given, never by writing into the
// caller's Authority, its policy or the options objects. Real loopback server over SQLite.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type AuthorityPolicy, openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {Store} from '../../src/store/index.js'
import {startServer} from '../../src/wire/server.js'
import {authorityKey, codeOf, coordinator, createCommand, newGroup, orgService} from '../support/authority-helpers.js'
import {owner, post, registry, sqliteStore} from '../support/authority-helpers.js'
import {collector, connect} from '../support/wire-helpers.js'

let store: Store
let cleanup: () => Promise<void>

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
}, 60_000)
afterAll(async () => cleanup?.())

describe('caller input is never mutated (openAuthority, startServer)', () => {
  it('the options objects stay deep-equal to their clones while the server requires Agent sessions', async () => {
    const policy: AuthorityPolicy = {
      rootMissionOwners: [owner.principal!.id],
      terminators: [orgService.principal!.id],
      maxMissionDepth: 4,
      limits: {messageRate: {hard: 100, soft: 50, windowMinutes: 1}},
    }
    const policyBefore = structuredClone(policy)
    const authority = openAuthority({store, registry, authorityKey, policy})
    const policyOfAuthority = structuredClone(authority.policy)
    // No poll in this test's time: a delivery can only come from the append listeners.
    const tls = 'insecure-loopback' as const
    const serverOptions = {
      authority,
      host: '127.0.0.1',
      port: 0,
      tls,
      pollMs: 600_000,
      sendWindow: 64,
      log: () => undefined,
    }
    const {authority: _authority, log: _log, ...serverData} = serverOptions
    const serverDataBefore = structuredClone(serverData)
    const server = await startServer(serverOptions)
    try {
      // Behind the gateway an Agent that never opened a session is refused (AUTH_REQUIRED) ...
      const g = newGroup('caller-input')
      expect(codeOf(await submit(server.authority, createCommand(g)))).toBe('ok')
      expect(server.authority.policy.requireAgentSessions).toBe(true)
      expect(codeOf(await submit(server.authority, post(coordinator, g)))).toBe('AUTH_REQUIRED')
      // ... while the caller's own Authority keeps the policy it was opened with.
      expect(authority.policy.requireAgentSessions).toBeUndefined()
      expect(codeOf(await submit(authority, post(coordinator, g)))).toBe('ok')

      // The two share their append listeners: an append through the caller's Authority reaches a wire subscriber.
      const c = await connect(server.url, owner, {reconnect: false})
      const got = collector()
      await c.subscribe(g, {afterSequence: 0}, got.onEvent)
      const head = (await store.head(g))!.sequence
      await got.until(() => got.events.length === head)
      expect(codeOf(await submit(authority, post(owner, g)))).toBe('ok')
      await got.until(() => got.events.length === head + 1)
      expect(got.events.at(-1)!.kind).toBe('message.posted')
      await c.close()
    } finally {
      await server.close()
    }
    expect(policy).toEqual(policyBefore)
    expect(authority.policy).toEqual(policyOfAuthority)
    expect(serverOptions.authority).toBe(authority)
    expect(serverData).toEqual(serverDataBefore)
  })

  it("the Authority's policy is its own frozen copy", () => {
    const policy: AuthorityPolicy = {rootMissionOwners: [owner.principal!.id], terminators: []}
    const authority = openAuthority({store, registry, authorityKey, policy})
    policy.rootMissionOwners.push('urn:mwp:test:someone-else')
    policy.requireAgentSessions = true
    expect(authority.policy).toEqual({rootMissionOwners: [owner.principal!.id], terminators: []})
    const writable = authority.policy as AuthorityPolicy
    expect(() => {
      writable.requireAgentSessions = true
    }).toThrow(TypeError)
    expect(() => writable.rootMissionOwners.push('urn:mwp:test:someone-else')).toThrow(TypeError)
    const served = authority.requiringAgentSessions()
    expect(served.policy).toEqual({
      rootMissionOwners: [owner.principal!.id],
      terminators: [],
      requireAgentSessions: true,
    })
    expect(served.requiringAgentSessions()).toBe(served)
    expect(authority.policy.requireAgentSessions).toBeUndefined()
  })
})
