// Runs the selected bundles of one root. Bundle integrity failures stop that bundle's run.

import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {BundleRoot} from './bundle.js'
import {runCryptography} from './cryptography.js'
import type {BundleName, BundleReport, Progress} from './report.js'
import {runStructural} from './structural.js'

const MANIFESTS: Record<BundleName, string> = {
  structural: 'conformance/manifest.json',
  cryptography: 'cryptography/manifest.json',
  admission: 'admission/manifest.json',
}

const RUNNERS: Partial<Record<BundleName, (root: BundleRoot, progress?: Progress) => BundleReport>> = {
  structural: runStructural,
  cryptography: runCryptography,
}

/** The bundles of `selection` that this root has and this build can run. */
export function availableBundles(dir: string, selection: 'all' | BundleName): BundleName[] {
  const wanted: BundleName[] = selection === 'all' ? ['structural', 'cryptography', 'admission'] : [selection]
  return wanted.filter((b) => RUNNERS[b] !== undefined && (selection !== 'all' || existsSync(join(dir, MANIFESTS[b]))))
}

export function runBundle(dir: string, bundle: BundleName, progress?: Progress): BundleReport {
  const runner = RUNNERS[bundle]
  if (!runner) throw new Error(`the ${bundle} bundle runner is not implemented yet`)
  return runner(new BundleRoot(dir), progress)
}
