// The compiled worker handler (dist/src/poc/work/handler.js, which the test run's global setup
// builds) in a real slot process, as `mwp agent run --handler` runs it: a defective first attempt
// is submitted with failed Evidence for the test that catches the bug.

import {existsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {EvidenceClaim} from '../../../src/agent/handler.js'
import {startSlot, type SlotReports} from '../../../src/agent/slots.js'
import {contentHash} from '../../../src/crypto/hash.js'
import {catalogue, requirementsOf, tempDir} from './layout.js'
import {blobPath, criterion, spec} from './contracts.js'
import {PROJECT_ROOT} from '../../support/upstream.js'
import {requirements, tests} from '../../../src/poc/work/stages.js'

const module = join(PROJECT_ROOT, 'dist/src/poc/work/handler.js')

describe('the compiled poc handler in a slot', () => {
  it('implements with the defect, runs the tests and reports the failing criterion', async () => {
    expect(existsSync(module)).toBe(true)
    const p = catalogue('semver-lite')
    const req = requirementsOf(p, 8)
    const files: Record<string, string> = {}
    for (const [path, text] of Object.entries({...requirements(p, 8), ...tests(req)})) {
      files[path] = contentHash(text)
      writeFileSync(blobPath(contentHash(text)), text)
    }
    const work = spec({stage: 'implement', project: 'semver-lite', seed: 8, files, defect: 'compare-ignores-patch'}, [
      criterion('compare-patch'),
      criterion('bump-major'),
    ])
    const names: string[] = []
    const evidence: {ids: string[]; claim: EvidenceClaim}[] = []
    const reports: SlotReports = {
      checkpoint: async (state) => contentHash(JSON.stringify(state)),
      artifact: async (content, meta) => (names.push(meta.name ?? ''), contentHash(content)),
      progress: () => undefined,
      evidence: (ids, claim) => void evidence.push({ids, claim}),
      usage: () => undefined,
      log: () => undefined,
    }
    const outcome = await startSlot({module}, work, tempDir('slot'), reports).done
    expect(outcome).toEqual({type: 'submit'})
    expect(names).toEqual(['src/semver-lite.ts'])
    expect(evidence.map((e) => [e.ids, e.claim.result])).toEqual([
      [['compare-patch'], 'failed'],
      [['bump-major'], 'passed'],
    ])
  })
})
