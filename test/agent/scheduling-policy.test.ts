// The Organization's scheduling policy file (spec §11.1; ACCEPTANCE F2): per Group weight,
// priority class and quota over a default, and a clear usage error for anything else.

import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {
  DEFAULT_GROUP_POLICY,
  SchedulingPolicyError,
  parseSchedulingPolicy,
  readSchedulingPolicy,
  watchSchedulingPolicy,
} from '../../src/agent/scheduling-policy.js'
import {cli} from '../support/agent-org.js'

const G = 'urn:mwp:dev:org:o:group:a'

describe('the scheduling policy file', () => {
  it("gives a listed Group its own members over the default's, every other Group the default", () => {
    const policy = parseSchedulingPolicy(
      JSON.stringify({default: {weight: 2}, groups: {[G]: {weight: 3, priorityClass: 1, quota: 1}}}),
      'policy.json',
    )
    expect(policy(G)).toEqual({weight: 3, priorityClass: 1, quota: 1})
    expect(policy('urn:mwp:dev:org:o:group:b')).toEqual({weight: 2, priorityClass: 0})
    expect(parseSchedulingPolicy('{}', 'p')(G)).toEqual(DEFAULT_GROUP_POLICY)
    // A Group entry inherits what it does not say from the default.
    expect(
      parseSchedulingPolicy(JSON.stringify({default: {priorityClass: 2}, groups: {[G]: {weight: 5}}}), 'p')(G),
    ).toEqual({weight: 5, priorityClass: 2})
  })

  it.each([
    ['not JSON', '{', /not JSON/],
    ['an array', '[]', /must be a JSON object/],
    ['an unknown top-level member', '{"urgency": 1}', /unknown member "urgency"/],
    ['a zero weight', `{"groups": {"${G}": {"weight": 0}}}`, /weight must be a number > 0/],
    ['a fractional class', '{"default": {"priorityClass": 1.5}}', /priorityClass must be an integer ≥ 0/],
    ['a zero quota', '{"default": {"quota": 0}}', /quota must be an integer ≥ 1/],
    ["a Coordinator's urgency", `{"groups": {"${G}": {"urgency": "critical"}}}`, /unknown member "urgency"/],
  ])('refuses %s', (_, text, message) => {
    expect(() => parseSchedulingPolicy(text, 'policy.json')).toThrow(SchedulingPolicyError)
    expect(() => parseSchedulingPolicy(text, 'policy.json')).toThrow(message)
  })

  it('`mwp agent run --scheduling-policy` with a broken file is a usage error (exit 2) naming the problem, before connecting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mwp-policy-'))
    const file = join(dir, 'policy.json')
    writeFileSync(file, '{"default": {"weight": -1}}')
    expect(() => readSchedulingPolicy(join(dir, 'missing.json'))).toThrow(/cannot read the scheduling policy/)
    // A dev organization is not needed: the policy is read before the Agent resolves its server.
    const run = cli([
      'agent',
      'run',
      '--config',
      join(dir, 'none.json'),
      '--agent',
      'w',
      '--exec',
      'true',
      '--scheduling-policy',
      file,
    ])
    expect(await run.exited).toBe(2)
    expect(run.out().stderr).toContain('default.weight must be a number > 0')
  })
})

describe('watchSchedulingPolicy', () => {
  it('hands over each good edit of the file, reports a broken one (the last good policy stays with the caller), and stops', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mwp-policy-')), 'policy.json')
    writeFileSync(file, JSON.stringify({groups: {[G]: {weight: 2}}}))
    const seen: number[] = []
    const errors: string[] = []
    const stop = watchSchedulingPolicy(
      file,
      (p) => seen.push(p(G).weight),
      (why) => errors.push(why),
    )
    try {
      // mtime has a one-second granularity on some file systems: an edit a second later is always seen.
      await new Promise((r) => setTimeout(r, 1100))
      writeFileSync(file, JSON.stringify({groups: {[G]: {weight: 5}}}))
      await expect.poll(() => seen, {timeout: 10_000}).toEqual([5])
      await new Promise((r) => setTimeout(r, 1100))
      writeFileSync(file, '{"groups": ')
      await expect.poll(() => errors.length, {timeout: 10_000}).toBe(1)
      expect(errors[0]).toContain('is not JSON')
      expect(seen).toEqual([5])
    } finally {
      stop()
    }
    await new Promise((r) => setTimeout(r, 1100))
    writeFileSync(file, JSON.stringify({groups: {[G]: {weight: 7}}}))
    await new Promise((r) => setTimeout(r, 2500))
    expect(seen).toEqual([5]) // stopped: no more reads
  })
})
