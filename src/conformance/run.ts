// Runs the selected bundles of one root. Bundle integrity failures stop that bundle's run.

import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {BundleRoot} from './bundle.js'
import {runAdmission} from './admission.js'
import {runCryptography} from './cryptography.js'
import type {BundleName, BundleReport, Progress} from './report.js'
import {runStructural} from './structural.js'

const MANIFESTS: Record<BundleName, string> = {
  structural: 'conformance/manifest.json',
  cryptography: 'cryptography/manifest.json',
  admission: 'admission/manifest.json',
}

const RUNNERS: Record<BundleName, (root: BundleRoot, progress?: Progress) => BundleReport | Promise<BundleReport>> = {
  structural: runStructural,
  cryptography: runCryptography,
  admission: runAdmission,
}

/** The bundles of `selection` that this root has (all three for `all`, when present). */
export function availableBundles(dir: string, selection: 'all' | BundleName): BundleName[] {
  const wanted: BundleName[] = selection === 'all' ? ['structural', 'cryptography', 'admission'] : [selection]
  return wanted.filter((b) => selection !== 'all' || existsSync(join(dir, MANIFESTS[b])))
}

export async function runBundle(dir: string, bundle: BundleName, progress?: Progress): Promise<BundleReport> {
  return RUNNERS[bundle](new BundleRoot(dir), progress)
}
