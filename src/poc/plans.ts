// The proof of concept's Missions as Coordinator plans (agent/coordinator/plan.ts): real software
// development in separate graph stages (§22) — requirements, tests, implementation, code review by
// another Agent, integration — each reviewed by the Coordinator running the stage's real checks
// (work/check.ts) on the submitted files. Mission A promotes its documentation to a child Mission
// (§14) and answers a change request with a corrective WorkItem; Mission B runs concurrently on the
// shared Worker.

import {join} from 'node:path'
import type {PlanItem} from '../agent/coordinator/plan.js'
import {packageRoot} from '../schema/catalog.js'
import {PROJECTS} from './work/projects.js'

/** The Agents of the proof of concept's Organization (config/dev-org.ts names). */
export const SHARED_WORKER = 'worker-1'
export const A_WORKER = 'worker-2'
export const B_WORKER = 'worker-3'
/** Each Worker's execution slots: the shared one has two (§22 "multiple execution slots"). */
export const WORKER_SLOTS: Readonly<Record<string, number>> = {[SHARED_WORKER]: 2, [A_WORKER]: 1, [B_WORKER]: 1}

/**
 * The urgent Mission's entry in the shared Worker's scheduling policy (§11.1, the Organization's):
 * a higher priority class and a share large enough that its next item goes ahead of the others'
 * whenever a slot frees — so only its quota of one running item holds the second one back.
 */
export const URGENT_POLICY = {weight: 100, priorityClass: 1, quota: 1} as const

export interface PocPlanDoc {
  objective: string
  defaults: Record<string, unknown>
  workItems: PlanItem[]
  onChangeRequest?: PlanItem[]
  submit?: string[]
}

// The built check program (tests run the sources; the Agents run the package's dist either way).
export const CHECK_JS = join(packageRoot(), 'dist/src/poc/work/check.js')
export const HANDLER_JS = join(packageRoot(), 'dist/src/poc/work/handler.js')

const check = (name: string) => `"${process.execPath}" "${CHECK_JS}" ${name} .`

const defaults = {offerSeconds: 30, maxRounds: 3, deadlineMinutes: 30, budget: {currency: 'EUR', financialLimit: 1}}

function stage(
  key: string,
  goal: string,
  poc: {stage: string; project: string; seed: number; defect?: string},
  o: {
    dependsOn?: string[]
    inputsFrom?: string[]
    prefer: string[]
    deliverable: [string, string]
    criteria: [id: string, description: string, check: string | null][]
    independentOf?: string[]
    /** Effort per step (work/stage.ts stepMs). */
    stepMs?: number
  },
): PlanItem {
  return {
    key,
    goal,
    ...(o.dependsOn ? {dependsOn: o.dependsOn} : {}),
    ...(o.inputsFrom ? {inputsFrom: o.inputsFrom} : {}),
    ...(o.independentOf ? {independentOf: o.independentOf} : {}),
    prefer: o.prefer,
    deliverables: [{id: o.deliverable[0], description: o.deliverable[1], mediaType: 'application/octet-stream'}],
    criteria: o.criteria.map(([id, description, c]) => ({
      id,
      description,
      evidence: ['deterministic_test'],
      ...(c !== null ? {check: check(c)} : {}),
    })),
    constraints: {poc: {...poc, files: {}, steps: 3, ...(o.stepMs ? {stepMs: o.stepMs} : {})}},
  }
}

export interface PocPlans {
  a: PocPlanDoc
  aDocs: PocPlanDoc
  b: PocPlanDoc
  /** The high-priority arrival: a small urgent Mission while the shared Worker's slots are busy. */
  c: PocPlanDoc
}

export const OBJECTIVES = {
  a: 'Build and ship the textkit string library',
  aDocs: 'Document the textkit string library',
  b: 'Build and ship the semver-lite version library',
  c: 'Hotfix: restate the semver-lite requirements for a release blocker',
}

/** The three plans for seed `seed`. */
export function pocPlans(seed: number, options: {defect?: string} = {}): PocPlans {
  const textkit = PROJECTS.textkit!.name
  const semver = PROJECTS['semver-lite']!.name
  const a = (s: string, extra: {defect?: string} = {}) => ({stage: s, project: textkit, seed, ...extra})
  const b = (s: string) => ({stage: s, project: semver, seed})
  return {
    a: {
      objective: OBJECTIVES.a,
      defaults,
      workItems: [
        stage('requirements', 'Analyse the requirements of textkit', a('requirements'), {
          prefer: [A_WORKER],
          deliverable: ['requirements', 'requirements.json with machine-readable acceptance criteria'],
          criteria: [['requirements', 'Every acceptance criterion names a declared function', 'requirements']],
        }),
        stage('tests', 'Write the tests of textkit from its acceptance criteria', a('tests'), {
          dependsOn: ['requirements'],
          prefer: [A_WORKER],
          deliverable: ['tests', 'test/textkit.test.ts'],
          criteria: [['tests-declared', 'One test per acceptance criterion', null]],
        }),
        stage(
          'implement',
          'Implement textkit in TypeScript',
          a('implement', {defect: options.defect ?? 'truncate-off-by-one'}),
          {
            dependsOn: ['tests'],
            inputsFrom: ['requirements', 'tests'],
            prefer: [SHARED_WORKER],
            deliverable: ['source', 'src/textkit.ts'],
            criteria: [
              ['typecheck', 'The sources type-check under strict TypeScript', 'typecheck'],
              ['tests', 'Every test passes', 'tests'],
              ['rule', 'No any, no console, every export documented, every criterion tested', 'rule'],
            ],
          },
        ),
        stage('review', 'Review the textkit implementation', a('review'), {
          dependsOn: ['implement'],
          inputsFrom: ['requirements', 'tests', 'implement'],
          // §7.2: never the author's own review; another Agent runs the checks.
          independentOf: ['implement'],
          prefer: [A_WORKER, SHARED_WORKER],
          deliverable: ['review', 'review.json with the checks the reviewer ran'],
          criteria: [['review-verdict', 'The reviewer approves and every check it ran passed', 'review-verdict']],
        }),
        stage('integrate', 'Build the textkit package and run its tests against the build', a('integrate'), {
          dependsOn: ['review'],
          inputsFrom: ['requirements', 'tests', 'implement'],
          prefer: [SHARED_WORKER],
          deliverable: ['package', 'dist/, package.json and integration.json'],
          criteria: [['package', 'The built package matches its manifest and its tests pass', 'package']],
        }),
        {
          ...stage('docs', 'Document textkit', a('docs'), {
            dependsOn: ['requirements'],
            prefer: [B_WORKER],
            deliverable: ['docs', 'README.md'],
            criteria: [['docs', 'The README names every function', null]],
          }),
          child: {objective: OBJECTIVES.aDocs, coordinator: 'coordinator-2'},
        },
      ],
      onChangeRequest: [
        stage('revise-docs', 'Revise the textkit documentation: {reason}', a('docs'), {
          dependsOn: ['requirements'],
          prefer: [A_WORKER],
          deliverable: ['docs', 'README.md'],
          criteria: [['docs', 'The README names every function', 'docs']],
        }),
      ],
    },
    aDocs: {
      objective: OBJECTIVES.aDocs,
      defaults,
      workItems: [
        stage('requirements', 'Restate the textkit requirements', a('requirements'), {
          prefer: [B_WORKER],
          deliverable: ['requirements', 'requirements.json'],
          criteria: [['requirements', 'Every acceptance criterion names a declared function', 'requirements']],
        }),
        stage('docs', 'Write the textkit README', a('docs'), {
          dependsOn: ['requirements'],
          prefer: [B_WORKER],
          // Long enough to be cut off the authority in the middle (the disconnection fault).
          stepMs: 1500,
          deliverable: ['docs', 'README.md'],
          criteria: [['docs', 'The README names every function', 'docs']],
        }),
      ],
      submit: ['docs'],
    },
    b: {
      objective: OBJECTIVES.b,
      defaults,
      workItems: [
        stage('requirements', 'Analyse the requirements of semver-lite', b('requirements'), {
          prefer: [B_WORKER],
          deliverable: ['requirements', 'requirements.json'],
          criteria: [['requirements', 'Every acceptance criterion names a declared function', 'requirements']],
        }),
        // Two independent branches on the shared Worker at once: its two slots both run.
        stage('tests', 'Write the tests of semver-lite', b('tests'), {
          dependsOn: ['requirements'],
          prefer: [SHARED_WORKER],
          stepMs: 2000,
          deliverable: ['tests', 'test/semver-lite.test.ts'],
          criteria: [['tests-declared', 'One test per acceptance criterion', null]],
        }),
        stage('docs', 'Document semver-lite', b('docs'), {
          dependsOn: ['requirements'],
          prefer: [SHARED_WORKER],
          stepMs: 2000,
          deliverable: ['docs', 'README.md'],
          criteria: [['docs', 'The README names every function', 'docs']],
        }),
        stage('implement', 'Implement semver-lite in TypeScript', b('implement'), {
          dependsOn: ['tests'],
          inputsFrom: ['requirements', 'tests'],
          prefer: [SHARED_WORKER],
          deliverable: ['source', 'src/semver-lite.ts'],
          criteria: [
            ['typecheck', 'The sources type-check', 'typecheck'],
            ['tests', 'Every test passes', 'tests'],
            ['rule', 'Code rules hold', 'rule'],
          ],
        }),
        stage('integrate', 'Build the semver-lite package', b('integrate'), {
          dependsOn: ['implement'],
          inputsFrom: ['requirements', 'tests', 'implement'],
          prefer: [SHARED_WORKER],
          deliverable: ['package', 'the built package'],
          criteria: [['package', 'The built package matches its manifest and its tests pass', 'package']],
        }),
      ],
    },
    c: {
      objective: OBJECTIVES.c,
      defaults,
      // Two independent items for the shared Worker under a quota of one (URGENT_POLICY): the
      // second waits for the first even when a slot is free, which is what shows the quota holds.
      // Each runs long enough (3 steps of 3 s) for the other slot's item to finish meanwhile.
      workItems: ['hotfix', 'hotfix-recheck'].map((key, i) =>
        stage(
          key,
          i === 0
            ? 'Restate the semver-lite requirements for the release blocker'
            : 'Re-check the semver-lite acceptance criteria for the release',
          b('requirements'),
          {
            prefer: [SHARED_WORKER],
            stepMs: 3000,
            deliverable: ['requirements', 'requirements.json'],
            criteria: [['requirements', 'Every acceptance criterion names a declared function', 'requirements']],
          },
        ),
      ),
    },
  }
}
