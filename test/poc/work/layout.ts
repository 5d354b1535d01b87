// A working directory laid out as the stages would leave it for a project: requirements.json, the
// generated tests, the implementation (correct, with a defect, or reworked) and the README.

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll} from 'vitest'
import {project, type Project} from '../../../src/poc/work/projects.js'
import {parseRequirements, type Requirements} from '../../../src/poc/work/requirements.js'
import {
  REQUIREMENTS_PATH,
  docs,
  implement,
  requirements,
  tests,
  type Files,
  type ImplementOptions,
} from '../../../src/poc/work/stages.js'
import {writeFiles} from '../../../src/poc/work/toolchain.js'

const made: string[] = []
afterAll(() => made.forEach((d) => rmSync(d, {recursive: true, force: true})))

/** A fresh temporary directory, removed after the test file. */
export function tempDir(label = 'work'): string {
  const dir = mkdtempSync(join(tmpdir(), `mwp-poc-${label}-`))
  made.push(dir)
  return dir
}

export function catalogue(name: string): Project {
  const p = project(name)
  if (p === undefined) throw new Error(`no project ${name}`)
  return p
}

export function requirementsOf(p: Project, seed: number): Requirements {
  const text = requirements(p, seed)[REQUIREMENTS_PATH]
  const req = text === undefined ? null : parseRequirements(text)
  if (req === null) throw new Error('the requirements generator wrote no well-formed requirements.json')
  return req
}

/** All four generated files of `name` at `seed`, the implementation made with `options`. */
export function projectFiles(name: string, seed: number, options: ImplementOptions = {}): Files {
  const p = catalogue(name)
  const req = requirementsOf(p, seed)
  return {...requirements(p, seed), ...tests(req), ...implement(req, p, options), ...docs(req, p)}
}

export async function projectDir(name: string, seed: number, options: ImplementOptions = {}): Promise<string> {
  const dir = tempDir(name)
  await writeFiles(dir, projectFiles(name, seed, options))
  return dir
}
