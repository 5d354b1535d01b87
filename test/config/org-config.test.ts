// Organization configuration (issue 4) and the development Organization (issue 5): the file
// format and its errors, the authority built from it, and `createDevOrganization` producing keys,
// registry, signed Agent Cards and a config that a real authority accepts Commands under.

import {cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import {CARD_REGISTERED} from '../../src/authority/ingress/organization.js'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {
  OrgConfigError,
  loadOrgConfig,
  openAuthorityFromConfig,
  parseOrgConfig,
  resolveStoreUrl,
} from '../../src/config/org-config.js'
import {readKeyFile} from '../../src/crypto/keyfile.js'
import {buildCommand} from '../../src/operator/command-builder.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {storeBackends} from '../support/store-backends.js'
import {Rejection, verify} from '../../src/signing/verify.js'

let dir: string
let org: DevOrganization

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-org-config-'))
  org = await createDevOrganization(join(dir, 'org'), {organization: 'urn:mwp:test:org:config', workers: 2})
}, 60_000)
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const missionPayload = (groupId: string, coordinatorAgentId: string) => ({
  missionId: groupId.replace(':group:', ':mission:'),
  groupId,
  objective: 'Ship the release notes',
  definitionOfDone: [
    {criterionId: 'notes', description: 'Release notes published', evidenceRequired: ['human_review']},
  ],
  deadline: '2027-01-31T00:00:00Z',
  budget: {currency: 'EUR', financialLimit: 100},
  approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: true},
  coordinatorAgentId,
})

describe('createDevOrganization', () => {
  it('writes keys (0600), a valid registry binding every key, verified Agent Cards and a loadable config', () => {
    const names = org.identities.map((i) => i.name)
    expect(names).toEqual(['organization', 'authority', 'admission', 'owner', 'coordinator', 'worker-1', 'worker-2'])
    const evidence = RegistryEvidence.fromBytes(readFileSync(org.registry))
    for (const id of org.identities) {
      const key = readKeyFile(join(org.dir, id.keyFile))
      expect(key.principal).toEqual(id.principal)
      expect(statSync(join(org.dir, id.keyFile)).mode & 0o777).toBe(0o600)
    }
    const cards = org.identities.filter((i) => i.card)
    expect(cards.map((c) => c.name)).toEqual(['coordinator', 'worker-1', 'worker-2'])
    for (const c of cards) {
      const v = verify('agent-card', readFileSync(join(org.dir, c.card!)), evidence)
      expect(v).not.toBeInstanceOf(Rejection)
      if (!(v instanceof Rejection)) {
        expect(v.principal.id).toBe(`${org.organization}:service:organization`)
        expect((v.document as {agentId: string}).agentId).toBe(c.principal.id)
      }
    }
    const config = loadOrgConfig(org.config)
    expect(config.organization).toBe('urn:mwp:test:org:config')
    expect(config.store).toBe(`sqlite:${join(org.dir, 'authority.db')}`)
    expect(config.policy.rootMissionOwners).toEqual([`${org.organization}:human:owner`])
  })

  it('[+cmd:ext.missionweaveprotocol.registry.agent_card_register] registers every Agent Card with the authority: version 1 of each is in the Organization log', async () => {
    const {store, close} = await openAuthorityFromConfig(loadOrgConfig(org.config))
    try {
      for (const c of org.identities.filter((i) => i.card)) {
        expect(await store.organizationLog().currentVersion(CARD_REGISTERED, c.principal.id)).toBe(1)
      }
      expect(await store.organizationLog().currentVersion(CARD_REGISTERED, `${org.organization}:human:owner`)).toBe(0)
    } finally {
      await close()
    }
  })

  it('refuses a non-empty directory without force, and replaces the Organization with force', async () => {
    await expect(createDevOrganization(org.dir)).rejects.toMatchObject({category: 'environment'})
    const other = join(dir, 'other')
    const first = await createDevOrganization(other, {organization: 'urn:mwp:test:org:first', workers: 0})
    const second = await createDevOrganization(other, {
      organization: 'urn:mwp:test:org:second',
      workers: 1,
      force: true,
    })
    expect(first.identities.length).toBe(5)
    expect(loadOrgConfig(second.config).organization).toBe('urn:mwp:test:org:second')
    expect(second.identities.find((i) => i.name === 'owner')!.keyId).not.toBe(
      first.identities.find((i) => i.name === 'owner')!.keyId,
    )
  })
})

describe('loadOrgConfig', () => {
  it('resolves paths against the file and fills defaults', () => {
    const c = parseOrgConfig(
      JSON.stringify({
        organization: 'urn:x:org',
        registry: 'r.json',
        authorityKey: '/abs/a.key.json',
        admissionKey: 'k/b.key.json',
        policy: {rootMissionOwners: [], limits: {messageRate: {hard: 5, windowMinutes: 1}}, maxMissionDepth: 2},
      }),
      '/etc/mwp/mwp.config.json',
    )
    expect(c.registry).toBe('/etc/mwp/r.json')
    expect(c.authorityKey).toBe('/abs/a.key.json')
    expect(c.admissionKey).toBe('/etc/mwp/k/b.key.json')
    expect(c.store).toBe('sqlite:/etc/mwp/authority.db')
    expect(c.server.url).toBe('wss://127.0.0.1:7443')
    expect(c.freshness).toEqual({maxAgeSeconds: 300, maxFutureSkewSeconds: 60})
    // policy passes through whole: members other engineers add reach the authority unchanged
    expect(c.policy).toMatchObject({limits: {messageRate: {hard: 5, windowMinutes: 1}}, maxMissionDepth: 2})
    expect(resolveStoreUrl('/d', 'postgres://u@h/db')).toBe('postgres://u@h/db')
    expect(resolveStoreUrl('/d', 'sqlite:///abs.db')).toBe('sqlite:/abs.db')
  })

  it('a missing file is an environment error; bad JSON and schema violations are usage errors', () => {
    const err = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        expect(e).toBeInstanceOf(OrgConfigError)
        return e as OrgConfigError
      }
      throw new Error('no error')
    }
    expect(err(() => loadOrgConfig(join(dir, 'absent.json'))).category).toBe('environment')
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, '{"organization": ')
    expect(err(() => loadOrgConfig(bad)).category).toBe('usage')
    writeFileSync(
      bad,
      JSON.stringify({
        organization: 'urn:x:org',
        registry: 'r.json',
        authorityKey: 'a',
        admissionKey: 'b',
        policy: {rootMissionOwners: []},
        extra: 1,
      }),
    )
    const e = err(() => loadOrgConfig(bad))
    expect(e.category).toBe('usage')
    expect(e.message).toMatch(/additional/)
    writeFileSync(
      bad,
      JSON.stringify({organization: 'urn:x:org', registry: 'r.json', authorityKey: 'a', admissionKey: 'b'}),
    )
    expect(err(() => loadOrgConfig(bad)).message).toMatch(/policy/)
  })

  it('a config naming a missing key file fails to open the authority as an environment error', async () => {
    const broken = join(dir, 'broken.config.json')
    const text = JSON.parse(readFileSync(org.config, 'utf8'))
    writeFileSync(
      broken,
      JSON.stringify({
        ...text,
        registry: join(org.dir, 'registry.json'),
        authorityKey: join(dir, 'nope.key.json'),
        admissionKey: join(org.dir, 'keys/admission.key.json'),
      }),
    )
    await expect(openAuthorityFromConfig(loadOrgConfig(broken))).rejects.toMatchObject({category: 'environment'})
  })
})

describe('openAuthorityFromConfig', () => {
  it('[+cmd:mission.create] builds an authority that accepts the configured root MissionOwner', async () => {
    const config = loadOrgConfig(org.config)
    const opened = await openAuthorityFromConfig(config)
    try {
      const owner = readKeyFile(join(org.dir, 'keys/owner.key.json'))
      const g = `${org.organization}:group:config-1`
      const built = buildCommand(owner, {
        kind: 'mission.create',
        groupId: g,
        payload: missionPayload(g, `${org.organization}:agent:coordinator`),
      })
      const r = await submit(opened.authority, built.bytes)
      expect('receipt' in r && r.receipt.actionId).toBe(built.actionId)
      expect((await opened.authority.current(g))!.mission.state).toBe('active')
    } finally {
      await opened.close()
    }
  })

  it('the whole policy reaches the authority; limits it cannot honour are a usage error', async () => {
    const text = JSON.parse(readFileSync(org.config, 'utf8'))
    const policy = {
      rootMissionOwners: [`${org.organization}:human:owner`],
      archivers: [`${org.organization}:service:authority`],
      maxMissionDepth: 3,
      limits: {messageRate: {hard: 10, soft: 5, windowMinutes: 1}},
    }
    const opened = await openAuthorityFromConfig(parseOrgConfig(JSON.stringify({...text, policy}), org.config))
    try {
      expect(opened.authority.policy).toMatchObject(policy)
    } finally {
      await opened.close()
    }
    const bad = parseOrgConfig(
      JSON.stringify({...text, policy: {...policy, limits: {messageRate: {hard: 1, soft: 5, windowMinutes: 1}}}}),
      org.config,
    )
    await expect(openAuthorityFromConfig(bad)).rejects.toMatchObject({category: 'usage'})
    expect(() =>
      parseOrgConfig(JSON.stringify({...text, policy: {...policy, limits: {messageRate: {hard: 1}}}}), org.config),
    ).toThrow(/windowMinutes/)
  })

  it('[-cmd:mission.create] refuses a human the configured policy does not name (AUTH_FORBIDDEN)', async () => {
    // The same Organization, but a policy naming no root MissionOwner: the policy reaches the authority.
    const text = JSON.parse(readFileSync(org.config, 'utf8'))
    const opened = await openAuthorityFromConfig(
      parseOrgConfig(JSON.stringify({...text, policy: {rootMissionOwners: []}}), org.config),
    )
    try {
      const owner = readKeyFile(join(org.dir, 'keys/owner.key.json'))
      const g = `${org.organization}:group:config-2`
      const built = buildCommand(owner, {
        kind: 'mission.create',
        groupId: g,
        payload: missionPayload(g, `${org.organization}:agent:coordinator`),
      })
      const r = await submit(opened.authority, built.bytes)
      expect('error' in r && r.error.code).toBe('AUTH_FORBIDDEN')
      expect(await opened.store.head(g)).toBeNull()
    } finally {
      await opened.close()
    }
  })
})

// The configured store is whatever URL the file names: the embedded SQLite default or PostgreSQL.
for (const backend of storeBackends('org-config')) {
  describe.runIf(backend.enabled)(`a configuration naming a ${backend.name} store`, () => {
    beforeAll(() => backend.start(), 120_000)
    afterAll(() => backend.stop())

    it('[+cmd:mission.create] initializes the store on first open, reopens it idempotently, and the authority accepts Commands there', async () => {
      const text = JSON.parse(readFileSync(org.config, 'utf8'))
      const config = parseOrgConfig(JSON.stringify({...text, store: await backend.fresh()}), org.config)
      const owner = readKeyFile(join(org.dir, 'keys/owner.key.json'))
      const g = `${org.organization}:group:${backend.name}-store`
      const first = await openAuthorityFromConfig(config)
      try {
        expect(first.store.config).toMatchObject({organizationId: org.organization, freshness: config.freshness})
        const r = await submit(
          first.authority,
          buildCommand(owner, {
            kind: 'mission.create',
            groupId: g,
            payload: missionPayload(g, `${org.organization}:agent:coordinator`),
          }).bytes,
        )
        expect('receipt' in r).toBe(true)
      } finally {
        await first.close()
      }
      const again = await openAuthorityFromConfig(config)
      try {
        expect((await again.authority.current(g))!.mission.state).toBe('active')
      } finally {
        await again.close()
      }
    })

    it('an Organization directory that moved still opens its store; a changed freshness window is refused', async () => {
      const text = JSON.parse(readFileSync(org.config, 'utf8'))
      const url = await backend.fresh()
      await (await openAuthorityFromConfig(parseOrgConfig(JSON.stringify({...text, store: url}), org.config))).close()
      const moved = join(dir, `moved-${backend.name}`)
      cpSync(org.dir, moved, {recursive: true})
      const reopened = await openAuthorityFromConfig(
        parseOrgConfig(JSON.stringify({...text, store: url}), join(moved, 'mwp.config.json')),
      )
      await reopened.close()
      const changed = parseOrgConfig(
        JSON.stringify({...text, store: url, freshness: {maxAgeSeconds: 30, maxFutureSkewSeconds: 5}}),
        org.config,
      )
      await expect(openAuthorityFromConfig(changed)).rejects.toThrow(/freshness/)
    })

    it('[-cmd:mission.create] a store initialized for another admission service is refused (environment) and keeps its first configuration', async () => {
      const text = JSON.parse(readFileSync(org.config, 'utf8'))
      const url = await backend.fresh()
      const other = await createDevOrganization(join(dir, `other-${backend.name}`), {
        organization: org.organization,
        workers: 0,
      })
      const first = await openAuthorityFromConfig(parseOrgConfig(JSON.stringify({...text, store: url}), org.config))
      await first.close()
      // Same Organization ID, different keys: the store keeps its first admission service.
      const otherText = JSON.parse(readFileSync(other.config, 'utf8'))
      await expect(
        openAuthorityFromConfig(parseOrgConfig(JSON.stringify({...otherText, store: url}), other.config)),
      ).rejects.toMatchObject({category: 'environment'})
      const reopened = await openAuthorityFromConfig(parseOrgConfig(JSON.stringify({...text, store: url}), org.config))
      try {
        expect(reopened.store.config.admissionService.keyId).toBe(
          org.identities.find((i) => i.name === 'admission')!.keyId,
        )
      } finally {
        await reopened.close()
      }
    })
  })
}
