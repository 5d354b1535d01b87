// The README's Coordinator plan is a valid plan as the README shows it (the YAML block of the
// Coordinators section), and it means what the README says of it.

import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {parsePlan} from '../../src/agent/coordinator/plan.js'
import {instantiate, submittedInstances} from '../../src/agent/coordinator/planned.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')
const yaml = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!)

describe('the README plan', () => {
  it('parses, and a change request replaces the draft in what is submitted', () => {
    expect(yaml).toHaveLength(1)
    const plan = parsePlan(yaml[0]!, 'README.md plan.yaml')
    expect(plan.workItems.map((i) => i.key)).toEqual(['draft', 'review'])
    const first = instantiate(plan, 'urn:mwp:mission:m', [])
    expect(first.find((p) => p.instance === 'review')!.independentOf).toEqual(['draft'])
    expect(submittedInstances(plan, first)).toEqual(['draft', 'review'])
    const changed = instantiate(plan, 'urn:mwp:mission:m', ['mention the date'])
    expect(changed.map((p) => p.instance)).toEqual(['draft', 'review', 'revise.c1'])
    expect(submittedInstances(plan, changed)).toEqual(['review', 'revise.c1'])
  })
})
