// The pure generators: the same seed gives the same bytes, another seed other acceptance criteria;
// the defect is only on a first attempt; the contract guard reads the convention exactly.

import {describe, expect, it} from 'vitest'
import {PROJECTS} from '../../../src/poc/work/projects.js'
import {CRITERION_ID, requirementsProblems} from '../../../src/poc/work/requirements.js'
import {pocStage} from '../../../src/poc/work/stage.js'
import {
  REQUIREMENTS_PATH,
  docs,
  implement,
  requirements,
  sourcePath,
  testPath,
  tests,
} from '../../../src/poc/work/stages.js'
import {catalogue, projectFiles, requirementsOf} from './layout.js'

const names = Object.keys(PROJECTS)

describe('the project catalogue', () => {
  it('holds textkit and semver-lite, each with defects on functions it declares', () => {
    expect(names).toEqual(expect.arrayContaining(['textkit', 'semver-lite']))
    for (const p of Object.values(PROJECTS)) {
      const declared = p.functions.map((f) => f.name)
      expect(Object.keys(p.sources).sort()).toEqual([...declared].sort())
      expect(Object.keys(p.defects).length).toBeGreaterThan(0)
      for (const d of Object.values(p.defects)) expect(declared).toContain(d.function)
      // Each function has optional examples to pick from, so seeds can differ.
      for (const f of declared)
        expect(p.examples.filter((e) => e.function === f && e.core !== true).length).toBeGreaterThan(
          p.optionalPerFunction,
        )
    }
  })
})

describe.each(names)('the generators of %s', (name) => {
  const p = catalogue(name)

  it('write the same bytes for the same seed', () => {
    expect(projectFiles(name, 11)).toEqual(projectFiles(name, 11))
    expect(projectFiles(name, 11, {defect: Object.keys(p.defects)[0]})).toEqual(
      projectFiles(name, 11, {defect: Object.keys(p.defects)[0]}),
    )
  })

  it('pick different acceptance criteria for different seeds, all well formed and with the core examples', () => {
    const ids = (seed: number): string[] => requirementsOf(p, seed).acceptanceCriteria.map((c) => c.criterionId)
    expect(new Set(ids(1))).not.toEqual(new Set(ids(2)))
    expect(requirements(p, 1)[REQUIREMENTS_PATH]).not.toEqual(requirements(p, 2)[REQUIREMENTS_PATH])
    const core = p.examples.filter((e) => e.core === true).map((e) => e.id)
    for (const seed of [1, 2, 3, 4, 5]) {
      const seedIds = ids(seed)
      expect(new Set(seedIds).size).toBe(seedIds.length)
      for (const id of seedIds) expect(id).toMatch(CRITERION_ID)
      expect(seedIds).toEqual(expect.arrayContaining(core))
      expect(seedIds.length).toBe(core.length + p.optionalPerFunction * p.functions.length)
      expect(requirementsProblems(JSON.parse(requirements(p, seed)[REQUIREMENTS_PATH]!))).toEqual([])
    }
  })

  it('write one node:test test per criterion, named by its criterionId', () => {
    const req = requirementsOf(p, 3)
    const text = tests(req)[testPath(name)]!
    expect(text).toContain("import {test} from 'node:test'")
    expect(text).toContain("import assert from 'node:assert/strict'")
    const declared = [...text.matchAll(/^test\("([^"]+)"/gm)].map((m) => m[1])
    expect(declared).toEqual(req.acceptanceCriteria.map((c) => c.criterionId))
  })

  it('put the defect in a first attempt only: the rework is the correct implementation', () => {
    const req = requirementsOf(p, 3)
    const correct = implement(req, p)[sourcePath(name)]
    for (const defect of Object.keys(p.defects)) {
      expect(implement(req, p, {defect})[sourcePath(name)]).not.toEqual(correct)
      expect(implement(req, p, {defect, rework: {round: 1, failures: ['tests']}})[sourcePath(name)]).toEqual(correct)
    }
  })

  it('document every function in the README', () => {
    const req = requirementsOf(p, 3)
    const readme = docs(req, p)['README.md']!
    for (const f of req.functions) expect(readme).toContain(f.signature)
  })
})

describe('requirementsProblems', () => {
  it('names a criterion whose function is not declared, a bad id and a duplicate', () => {
    const req = requirementsOf(catalogue('textkit'), 1)
    const first = req.acceptanceCriteria[0]!
    const broken = {
      ...req,
      acceptanceCriteria: [...req.acceptanceCriteria, {...first, function: 'nope'}, {...first, criterionId: 'Bad_Id'}],
    }
    const problems = requirementsProblems(broken)
    expect(problems).toEqual([
      `criterion ${first.criterionId} appears twice`,
      `criterion ${first.criterionId} names no declared function`,
      `acceptanceCriteria[${req.acceptanceCriteria.length + 1}] has no criterionId matching ${CRITERION_ID.source}`,
    ])
  })
})

describe('pocStage', () => {
  const poc = {stage: 'implement', project: 'textkit', seed: 4, files: {'requirements.json': 'sha256:00'}}

  it('reads the convention from constraints.poc', () => {
    expect(pocStage({poc})).toEqual(poc)
    const full = {...poc, defect: 'truncate-off-by-one', rework: {round: 1, failures: ['tests']}, steps: 5}
    expect(pocStage({poc: full, other: true})).toEqual(full)
  })

  it('is null for anything else', () => {
    for (const bad of [
      undefined,
      {},
      {poc: null},
      {poc: {...poc, stage: 'deploy'}},
      {poc: {...poc, seed: 1.5}},
      {poc: {...poc, files: {a: 1}}},
      {poc: {...poc, defect: 3}},
      {poc: {...poc, rework: {round: 1}}},
      {poc: {...poc, steps: 0}},
    ])
      expect(pocStage(bad)).toBeNull()
  })
})
