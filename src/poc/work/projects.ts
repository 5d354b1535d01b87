// The catalogue of small libraries the proof of concept's Agents really build: for each, the
// functions (TypeScript signature and doc), their example cases, the correct source of each
// function and a few named, real defects. The seed picks which optional examples become
// acceptance criteria (stages.ts); `core` examples are always picked, and they are the ones that
// catch every defect, so each seed's tests catch each defect.

import type {JsonValue} from '../../json/parse.js'

export interface FunctionSpec {
  name: string
  signature: string
  doc: string
}

export interface ExampleCase {
  /** The acceptance criterion ID this example becomes (`^[a-z][a-z0-9-]*$`), also the test name. */
  id: string
  function: string
  args: JsonValue[]
  expected: JsonValue
  /** Always an acceptance criterion, whatever the seed. */
  core?: boolean
}

export interface Defect {
  function: string
  description: string
  /** The function's source with the bug in it (replaces the correct one). */
  source: string
}

export interface Project {
  name: string
  description: string
  functions: FunctionSpec[]
  /** Exported types and constants the functions share, placed before them. */
  preamble: string
  /** Each function's correct source (without its doc comment: the generator adds it from `doc`). */
  sources: Record<string, string>
  /** Unexported helpers, placed after the functions. */
  support: string
  examples: ExampleCase[]
  defects: Record<string, Defect>
  /** How many optional examples per function the seed picks. */
  optionalPerFunction: number
}

const textkit: Project = {
  name: 'textkit',
  description: 'Small, dependency-free string helpers: slugs, truncation, word counts and capitalization.',
  functions: [
    {
      name: 'slugify',
      signature: 'slugify(text: string): string',
      doc: 'Lower-cases `text` and joins its runs of letters and digits with single dashes (no leading or trailing dash).',
    },
    {
      name: 'truncate',
      signature: 'truncate(text: string, max: number): string',
      doc: 'Returns `text` when it has at most `max` characters, otherwise its first `max - 1` characters and an ellipsis (…), so the result has exactly `max` characters.',
    },
    {
      name: 'wordCount',
      signature: 'wordCount(text: string): number',
      doc: 'Counts the words of `text`: the non-empty runs between whitespace of any kind and length.',
    },
    {
      name: 'capitalize',
      signature: 'capitalize(text: string): string',
      doc: 'Upper-cases the first character of `text` and leaves the rest unchanged.',
    },
  ],
  preamble: '',
  sources: {
    slugify: [
      'export function slugify(text: string): string {',
      '  return text',
      '    .toLowerCase()',
      "    .replace(/[^a-z0-9]+/g, '-')",
      "    .replace(/^-+|-+$/g, '')",
      '}',
    ].join('\n'),
    truncate: [
      'export function truncate(text: string, max: number): string {',
      '  if (text.length <= max) return text',
      "  if (max <= 0) return ''",
      "  return text.slice(0, max - 1) + '…'",
      '}',
    ].join('\n'),
    wordCount: [
      'export function wordCount(text: string): number {',
      '  return text.split(/\\s+/).filter((word) => word.length > 0).length',
      '}',
    ].join('\n'),
    capitalize: [
      'export function capitalize(text: string): string {',
      '  return text.charAt(0).toUpperCase() + text.slice(1)',
      '}',
    ].join('\n'),
  },
  support: '',
  examples: [
    {id: 'slugify-joins-words', function: 'slugify', args: ['Hello World'], expected: 'hello-world', core: true},
    {id: 'slugify-trims-edges', function: 'slugify', args: ['  Hello, World!  '], expected: 'hello-world', core: true},
    {id: 'slugify-keeps-digits', function: 'slugify', args: ['Top 10 Tips'], expected: 'top-10-tips'},
    {id: 'slugify-collapses-punctuation', function: 'slugify', args: ['a -- b __ c'], expected: 'a-b-c'},
    {id: 'slugify-empty', function: 'slugify', args: [''], expected: ''},
    {id: 'slugify-only-symbols', function: 'slugify', args: ['!!!'], expected: ''},
    {id: 'truncate-cuts-with-ellipsis', function: 'truncate', args: ['hello world', 5], expected: 'hell…', core: true},
    {id: 'truncate-keeps-short', function: 'truncate', args: ['short', 10], expected: 'short', core: true},
    {id: 'truncate-keeps-exact', function: 'truncate', args: ['exactly', 7], expected: 'exactly'},
    {id: 'truncate-at-word', function: 'truncate', args: ['The quick brown fox', 10], expected: 'The quick…'},
    {id: 'truncate-to-one', function: 'truncate', args: ['abcdef', 1], expected: '…'},
    {id: 'truncate-to-zero', function: 'truncate', args: ['abc', 0], expected: ''},
    {id: 'wordcount-two-words', function: 'wordCount', args: ['hello world'], expected: 2, core: true},
    {id: 'wordcount-empty', function: 'wordCount', args: [''], expected: 0, core: true},
    {id: 'wordcount-double-space', function: 'wordCount', args: ['two  spaces'], expected: 2, core: true},
    {id: 'wordcount-padded', function: 'wordCount', args: ['  padded   text  '], expected: 2},
    {id: 'wordcount-one-word', function: 'wordCount', args: ['one'], expected: 1},
    {id: 'wordcount-tabs-newlines', function: 'wordCount', args: ['tabs\tand\nnewlines'], expected: 3},
    {id: 'capitalize-word', function: 'capitalize', args: ['hello'], expected: 'Hello', core: true},
    {id: 'capitalize-keeps-rest', function: 'capitalize', args: ['hello World'], expected: 'Hello World', core: true},
    {id: 'capitalize-empty', function: 'capitalize', args: [''], expected: ''},
    {id: 'capitalize-single', function: 'capitalize', args: ['a'], expected: 'A'},
    {id: 'capitalize-accented', function: 'capitalize', args: ['élan'], expected: 'Élan'},
    {id: 'capitalize-already', function: 'capitalize', args: ['Already done'], expected: 'Already done'},
  ],
  defects: {
    'truncate-off-by-one': {
      function: 'truncate',
      description: 'keeps `max` characters before the ellipsis, so the result is one character too long',
      source: [
        'export function truncate(text: string, max: number): string {',
        '  if (text.length <= max) return text',
        "  if (max <= 0) return ''",
        "  return text.slice(0, max) + '…'",
        '}',
      ].join('\n'),
    },
    'slugify-edge-dashes': {
      function: 'slugify',
      description: 'does not trim the dashes that leading and trailing punctuation become',
      source: [
        'export function slugify(text: string): string {',
        "  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-')",
        '}',
      ].join('\n'),
    },
    'wordcount-single-space': {
      function: 'wordCount',
      description: 'splits on single spaces, so empty text has one word and double spaces add words',
      source: ['export function wordCount(text: string): number {', "  return text.split(' ').length", '}'].join('\n'),
    },
    'capitalize-lowercases-rest': {
      function: 'capitalize',
      description: 'lower-cases everything after the first character',
      source: [
        'export function capitalize(text: string): string {',
        '  return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase()',
        '}',
      ].join('\n'),
    },
  },
  optionalPerFunction: 2,
}

const semverLite: Project = {
  name: 'semver-lite',
  description: 'Parse, compare and bump semantic versions (MAJOR.MINOR.PATCH with optional prerelease).',
  functions: [
    {
      name: 'parse',
      signature: 'parse(version: string): SemVer | null',
      doc: 'Parses `MAJOR.MINOR.PATCH[-PRERELEASE]` (no leading zeros, no `v` prefix); returns null when `version` is not one.',
    },
    {
      name: 'compare',
      signature: 'compare(a: string, b: string): -1 | 0 | 1',
      doc: 'Orders two versions by SemVer 2.0.0 precedence: major, minor, patch numerically, then prerelease identifiers (a release ranks above its prereleases); throws a TypeError on an invalid version.',
    },
    {
      name: 'bump',
      signature: "bump(version: string, part: 'major' | 'minor' | 'patch'): string",
      doc: 'Increments `part` of `version`, resets the parts below it to 0 and drops any prerelease; throws a TypeError on an invalid version.',
    },
  ],
  preamble: [
    '/** A parsed semantic version. */',
    'export interface SemVer {',
    '  major: number',
    '  minor: number',
    '  patch: number',
    '  /** The dot-separated prerelease identifiers, empty for a release. */',
    '  prerelease: string[]',
    '}',
    '',
    'const VERSION = /^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?$/',
  ].join('\n'),
  sources: {
    parse: [
      'export function parse(version: string): SemVer | null {',
      '  const match = VERSION.exec(version)',
      '  if (match === null) return null',
      '  return {',
      '    major: Number(match[1]),',
      '    minor: Number(match[2]),',
      '    patch: Number(match[3]),',
      "    prerelease: match[4] === undefined ? [] : match[4].split('.'),",
      '  }',
      '}',
    ].join('\n'),
    compare: [
      'export function compare(a: string, b: string): -1 | 0 | 1 {',
      '  const left = required(a)',
      '  const right = required(b)',
      '  const core = sign(left.major - right.major) || sign(left.minor - right.minor) || sign(left.patch - right.patch)',
      '  if (core !== 0) return core',
      '  return comparePrerelease(left.prerelease, right.prerelease)',
      '}',
    ].join('\n'),
    bump: [
      "export function bump(version: string, part: 'major' | 'minor' | 'patch'): string {",
      '  const {major, minor, patch} = required(version)',
      "  if (part === 'major') return `${major + 1}.0.0`",
      "  if (part === 'minor') return `${major}.${minor + 1}.0`",
      '  return `${major}.${minor}.${patch + 1}`',
      '}',
    ].join('\n'),
  },
  support: [
    'function required(version: string): SemVer {',
    '  const parsed = parse(version)',
    '  if (parsed === null) throw new TypeError(`not a semantic version: ${version}`)',
    '  return parsed',
    '}',
    '',
    'function sign(n: number): -1 | 0 | 1 {',
    '  return n < 0 ? -1 : n > 0 ? 1 : 0',
    '}',
    '',
    '// SemVer 2.0.0 §11: a release ranks above its prereleases; identifiers compare one by one,',
    '// numeric ones numerically and below alphanumeric ones; a longer list wins a tie.',
    'function comparePrerelease(a: string[], b: string[]): -1 | 0 | 1 {',
    '  if (a.length === 0 || b.length === 0) return sign(b.length - a.length)',
    '  const length = Math.min(a.length, b.length)',
    '  for (let i = 0; i < length; i++) {',
    '    const order = compareIdentifier(a[i], b[i])',
    '    if (order !== 0) return order',
    '  }',
    '  return sign(a.length - b.length)',
    '}',
    '',
    'function compareIdentifier(a: string, b: string): -1 | 0 | 1 {',
    '  const numeric = /^\\d+$/',
    '  if (numeric.test(a) && numeric.test(b)) return sign(Number(a) - Number(b))',
    '  if (numeric.test(a)) return -1',
    '  if (numeric.test(b)) return 1',
    '  return a < b ? -1 : a > b ? 1 : 0',
    '}',
  ].join('\n'),
  examples: [
    {
      id: 'parse-release',
      function: 'parse',
      args: ['1.2.3'],
      expected: {major: 1, minor: 2, patch: 3, prerelease: []},
      core: true,
    },
    {id: 'parse-rejects-leading-zero', function: 'parse', args: ['01.2.3'], expected: null, core: true},
    {
      id: 'parse-prerelease',
      function: 'parse',
      args: ['0.10.0-alpha.1'],
      expected: {major: 0, minor: 10, patch: 0, prerelease: ['alpha', '1']},
    },
    {id: 'parse-rejects-short', function: 'parse', args: ['1.2'], expected: null},
    {id: 'parse-rejects-prefix', function: 'parse', args: ['v1.2.3'], expected: null},
    {
      id: 'parse-large-numbers',
      function: 'parse',
      args: ['10.20.30'],
      expected: {major: 10, minor: 20, patch: 30, prerelease: []},
    },
    {id: 'compare-patch', function: 'compare', args: ['1.2.3', '1.2.4'], expected: -1, core: true},
    {
      id: 'compare-release-above-prerelease',
      function: 'compare',
      args: ['1.0.0-alpha', '1.0.0'],
      expected: -1,
      core: true,
    },
    {id: 'compare-equal', function: 'compare', args: ['1.2.3', '1.2.3'], expected: 0, core: true},
    {id: 'compare-major', function: 'compare', args: ['2.0.0', '1.9.9'], expected: 1},
    {id: 'compare-numeric-minor', function: 'compare', args: ['1.10.0', '1.9.0'], expected: 1},
    {id: 'compare-longer-prerelease', function: 'compare', args: ['1.0.0-alpha', '1.0.0-alpha.1'], expected: -1},
    {id: 'compare-numeric-prerelease', function: 'compare', args: ['1.0.0-beta.2', '1.0.0-beta.11'], expected: -1},
    {id: 'compare-alpha-prerelease', function: 'compare', args: ['1.0.0-alpha.beta', '1.0.0-beta'], expected: -1},
    {id: 'bump-major', function: 'bump', args: ['1.2.3', 'major'], expected: '2.0.0', core: true},
    {id: 'bump-minor', function: 'bump', args: ['1.2.3', 'minor'], expected: '1.3.0', core: true},
    {id: 'bump-patch', function: 'bump', args: ['1.2.3', 'patch'], expected: '1.2.4'},
    {id: 'bump-minor-carries', function: 'bump', args: ['0.9.9', 'minor'], expected: '0.10.0'},
    {id: 'bump-drops-prerelease', function: 'bump', args: ['1.2.3-beta.1', 'patch'], expected: '1.2.4'},
    {id: 'bump-major-ten', function: 'bump', args: ['9.9.9', 'major'], expected: '10.0.0'},
  ],
  defects: {
    'compare-ignores-patch': {
      function: 'compare',
      description: 'compares major and minor only, so versions differing in the patch number compare equal',
      source: [
        'export function compare(a: string, b: string): -1 | 0 | 1 {',
        '  const left = required(a)',
        '  const right = required(b)',
        '  const core = sign(left.major - right.major) || sign(left.minor - right.minor)',
        '  if (core !== 0) return core',
        '  return comparePrerelease(left.prerelease, right.prerelease)',
        '}',
      ].join('\n'),
    },
    'compare-prerelease-reversed': {
      function: 'compare',
      description: 'compares prerelease identifiers the wrong way round, so a release ranks below its prereleases',
      source: [
        'export function compare(a: string, b: string): -1 | 0 | 1 {',
        '  const left = required(a)',
        '  const right = required(b)',
        '  const core = sign(left.major - right.major) || sign(left.minor - right.minor) || sign(left.patch - right.patch)',
        '  if (core !== 0) return core',
        '  return comparePrerelease(right.prerelease, left.prerelease)',
        '}',
      ].join('\n'),
    },
    'parse-accepts-leading-zeros': {
      function: 'parse',
      description: 'strips leading zeros before matching instead of rejecting them, which SemVer 2.0.0 forbids',
      source: [
        'export function parse(version: string): SemVer | null {',
        "  const match = VERSION.exec(version.replace(/(^|\\.)0+(\\d)/g, '$1$2'))",
        '  if (match === null) return null',
        '  return {',
        '    major: Number(match[1]),',
        '    minor: Number(match[2]),',
        '    patch: Number(match[3]),',
        "    prerelease: match[4] === undefined ? [] : match[4].split('.'),",
        '  }',
        '}',
      ].join('\n'),
    },
    'bump-keeps-lower-parts': {
      function: 'bump',
      description: 'a major bump keeps the minor and patch numbers instead of resetting them',
      source: [
        "export function bump(version: string, part: 'major' | 'minor' | 'patch'): string {",
        '  const {major, minor, patch} = required(version)',
        "  if (part === 'major') return `${major + 1}.${minor}.${patch}`",
        "  if (part === 'minor') return `${major}.${minor + 1}.0`",
        '  return `${major}.${minor}.${patch + 1}`',
        '}',
      ].join('\n'),
    },
  },
  optionalPerFunction: 2,
}

export const PROJECTS: Readonly<Record<string, Project>> = {textkit, 'semver-lite': semverLite}

/** The catalogue's project of this name, or undefined. */
export function project(name: string): Project | undefined {
  return Object.hasOwn(PROJECTS, name) ? PROJECTS[name] : undefined
}
