// ESLint (flat config): typescript-eslint's `recommended` set (not the type-checked sets: a type-aware
// lint of the whole tree is too slow for the project's 2-core machines), plus the purity boundary of
// the authority's decide/ and apply/ layers (ARCHITECTURE principle 2).
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

// decide/ and apply/ are pure and synchronous: the same state and Command give the same Events on
// every replay. They import only each other, the state model and a few pure helpers.
const PURE = ['src/authority/decide/**/*.ts', 'src/authority/apply/**/*.ts']

// An import is allowed when it starts inside decide/, apply/ or model/, or names one of the pure
// helpers, and climbs no further (`..`) after that prefix.
const PURE_IMPORT = String.raw`^(?!(?:\./|\.\./(?:decide|apply|model)/|\.\./\.\./(?:json/|errors\.js$|crypto/hash\.js$|signing/profiles\.js$))(?!.*\.\.))`

const IMPURE_GLOBALS = [
  'crypto',
  'performance',
  'process',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'queueMicrotask',
]

/** No clock, randomness, timers or process state; `who` names the code in the messages. */
const purity = (who) => ({
  'no-restricted-globals': [
    'error',
    ...IMPURE_GLOBALS.map((name) => ({name, message: `${who} must be pure: no ${name}.`})),
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: "MemberExpression[object.name='Date'][property.name='now']",
      message: `${who} must read no clock: take the time from the caller.`,
    },
    {
      selector: "NewExpression[callee.name='Date'][arguments.length=0]",
      message: `${who} must read no clock: new Date() needs an argument.`,
    },
    {
      selector: "CallExpression[callee.name='Date']",
      message: `${who} must read no clock: Date() is the current time.`,
    },
    {
      selector: "MemberExpression[object.name='Math'][property.name='random']",
      message: `${who} must be deterministic: no Math.random.`,
    },
    {
      selector: `MemberExpression[object.name='globalThis'][property.name=/^(Date|Math|${IMPURE_GLOBALS.join('|')})$/]`,
      message: `${who} must be pure: no clocks, randomness or process state through globalThis.`,
    },
    {
      selector: 'ImportExpression',
      message: `${who} must load no modules at run time.`,
    },
  ],
})

// The Agent runtime's Scheduler (src/agent/scheduler.ts and its parts) decides on virtual time
// the caller passes in: the same inputs in the same order give the same decisions.
const SCHEDULER = ['src/agent/scheduler.ts', 'src/agent/scheduler-*.ts', 'src/agent/indexed-heap.ts']

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'dev-org/',
      '.tmp/',
      // Generated or data trees: fixtures, vector bundles and schemas hold no source.
      'fixtures/',
      'conformance/',
      'cryptography/',
      'admission/',
      'behavior/',
      'schemas/',
      'oclif.manifest.json',
      // A third party's source, kept as published plus documented patches (vendor/postgres/PATCHES.md).
      'vendor/',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    // The PostgreSQL client runs from the patched copy (#postgres → vendor/postgres, PATCHES.md):
    // the npm copy crashes the process when a connection dies. Its types are imported as before.
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'postgres',
              message: "import the patched client from '#postgres' (vendor/postgres/PATCHES.md); `import type` is fine",
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    languageOptions: {globals: globals.node},
    rules: {
      // The project's convention (as tsc's noUnusedLocals/noUnusedParameters read it): a leading
      // underscore marks a binding kept on purpose, e.g. the member a rest destructuring omits.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    files: ['test/**'],
    rules: {
      // The JSON and JCS tests write number literals that lose precision on purpose: what the
      // parser and the canonicalizer make of the resulting double is what they check.
      'no-loss-of-precision': 'off',
      // Tests read untyped JSON documents (CLI output, frames, manifests) and poke at members;
      // src/, commands/, bench/ and scripts/ keep the rule.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: PURE,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: PURE_IMPORT,
              message:
                'decide/ and apply/ are pure: import only decide/, apply/, model/, json/, errors.js, crypto/hash.js ' +
                'and (types) signing/profiles.js; no node: or package modules, no I/O layers.',
            },
            {
              regex: String.raw`^\.\./\.\./signing/profiles\.js$`,
              allowTypeImports: true,
              message: 'decide/ and apply/ take only types from signing/profiles.js.',
            },
            {
              regex: String.raw`^\.\./\.\./json/timestamp\.js$`,
              importNames: ['formatUtcNow'],
              message: 'formatUtcNow reads the clock: decide/ and apply/ take the time from their context.',
            },
          ],
        },
      ],
      ...purity('decide/ and apply/'),
    },
  },
  {
    files: SCHEDULER,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: String.raw`^(?!\./[a-z-]+\.js$)`,
              message: 'the Scheduler imports only its sibling modules: no I/O layers, no node: or package modules.',
            },
          ],
        },
      ],
      ...purity('the Scheduler'),
    },
  },
)
