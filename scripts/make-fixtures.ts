// `npm run fixtures`: (re)generates fixtures/, conformance/ and cryptography/ at the project root.
// Usage: node dist/scripts/make-fixtures.js [OUT_DIR]   (default: the project root)

import {resolve} from 'node:path'
import {packageRoot} from '../src/schema/catalog.js'
import {makeFixtures} from './fixtures-lib.js'

const outDir = resolve(process.argv[2] ?? packageRoot())
const {files, written, removed} = makeFixtures(outDir)
for (const path of written) console.log(`wrote   ${path}`)
for (const path of removed) console.log(`removed ${path}`)
console.log(
  `${files.length} files in ${outDir}: ${written.length} written, ${files.length - written.length} unchanged, ${removed.length} removed`,
)
