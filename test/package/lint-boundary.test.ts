// The purity boundary of eslint.config.js: code under src/authority/decide/ and apply/ may not
// reach a clock, randomness, process state or an I/O layer; the same code under ingress/ may.
// Snippets are linted as if they lived at those paths (ESLint's Node API, the project's config).

import {ESLint} from 'eslint'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {beforeAll, describe, expect, it} from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

let eslint: ESLint

beforeAll(() => {
  eslint = new ESLint({cwd: root})
})

/** The rule IDs ESLint reports for `code` placed at `filePath`. */
async function rulesAt(filePath: string, code: string): Promise<(string | null)[]> {
  const [result] = await eslint.lintText(code, {filePath})
  if (result === undefined) throw new Error(`no lint result for ${filePath}`)
  return result.messages.map((m) => m.ruleId)
}

const IMPURE: Record<string, {code: string; rule: string}> = {
  'a clock call': {code: 'export const now = (): number => Date.now()\n', rule: 'no-restricted-syntax'},
  'a clock read without arguments': {
    code: 'export const now = (): string => new Date().toISOString()\n',
    rule: 'no-restricted-syntax',
  },
  'Math.random': {code: 'export const roll = (): number => Math.random()\n', rule: 'no-restricted-syntax'},
  'process state': {
    code: 'export const env = (): string | undefined => process.env.HOME\n',
    rule: 'no-restricted-globals',
  },
  'a timer': {
    code: 'export const later = (f: () => void): unknown => setTimeout(f, 1)\n',
    rule: 'no-restricted-globals',
  },
  'Web Crypto': {code: 'export const id = (): string => crypto.randomUUID()\n', rule: 'no-restricted-globals'},
  'a node: import': {
    code: "import {readFileSync} from 'node:fs'\nexport const read = readFileSync\n",
    rule: '@typescript-eslint/no-restricted-imports',
  },
  'a package import': {
    code: "import WebSocket from 'ws'\nexport const W = WebSocket\n",
    rule: '@typescript-eslint/no-restricted-imports',
  },
  'a store import': {
    code: "import {openStore} from '../../store/index.js'\nexport const open = openStore\n",
    rule: '@typescript-eslint/no-restricted-imports',
  },
  'an ingress import': {
    code: "import {latestSnapshot} from '../ingress/snapshot.js'\nexport const latest = latestSnapshot\n",
    rule: '@typescript-eslint/no-restricted-imports',
  },
  'an escape from model/': {
    code: "import {schemaCatalog} from '../model/../../schema/catalog.js'\nexport const c = schemaCatalog\n",
    rule: '@typescript-eslint/no-restricted-imports',
  },
  'a value from signing/profiles.js': {
    code: "import {PROFILES} from '../../signing/profiles.js'\nexport const p = PROFILES\n",
    rule: '@typescript-eslint/no-restricted-imports',
  },
  'the clock helper of json/timestamp.js': {
    code: "import {formatUtcNow} from '../../json/timestamp.js'\nexport const now = formatUtcNow\n",
    rule: '@typescript-eslint/no-restricted-imports',
  },
  'a dynamic import': {
    code: "export const load = (): Promise<unknown> => import('./common.js')\n",
    rule: 'no-restricted-syntax',
  },
}

describe('the purity boundary of decide/ and apply/', () => {
  for (const [name, {code, rule}] of Object.entries(IMPURE)) {
    it(`reports ${name} under decide/ and apply/, not under ingress/`, async () => {
      expect(await rulesAt('src/authority/decide/x.ts', code)).toEqual([rule])
      expect(await rulesAt('src/authority/apply/x.ts', code)).toEqual([rule])
      expect(await rulesAt('src/authority/ingress/x.ts', code)).toEqual([])
    })
  }

  it('passes pure code: imports inside the pure layers and of the pure helpers, time taken from an argument', async () => {
    const code = [
      "import {ERROR_CODES} from '../../errors.js'",
      "import {contentHash} from '../../crypto/hash.js'",
      "import {canonicalize} from '../../json/jcs.js'",
      "import {compareTimestampText} from '../../json/timestamp.js'",
      "import type {Principal} from '../../signing/profiles.js'",
      "import type {GroupState} from '../model/state.js'",
      "import {apply} from '../apply/index.js'",
      "import {reject} from './common.js'",
      'export const pure = (s: GroupState, p: Principal, at: string) =>',
      '  [ERROR_CODES, contentHash(canonicalize(s)), compareTimestampText(at, new Date(0).toISOString()), apply, reject, p]',
      'export const minute = (at: string): number => Math.floor(Date.parse(at) / 60_000)',
      '',
    ].join('\n')
    expect(await rulesAt('src/authority/decide/x.ts', code)).toEqual([])
    expect(await rulesAt('src/authority/apply/x.ts', code)).toEqual([])
  })
})
