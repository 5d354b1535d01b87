// One error base: every error class is an MwpError whose code is in MwpErrorCode, the CLI exits by
// the code's category, and a wrapped failure keeps what it wraps as the standard `cause`.

import {mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, expectTypeOf, it} from 'vitest'
import {ApplyError} from '../src/authority/apply/index.js'
import {AuthorityIntegrityError} from '../src/authority/authority.js'
import {SessionError} from '../src/authority/ingress/sessions.js'
import {CliFailure, CliRejection, EXIT, environment, usage} from '../src/cli/base.js'
import {OrgConfigError, configKey, loadOrgConfig} from '../src/config/org-config.js'
import {BundleError, BundleRoot} from '../src/conformance/bundle.js'
import {ResultsError, readResults} from '../src/conformance/test-results.js'
import {KeyFileError, readKeyFile} from '../src/crypto/keyfile.js'
import {
  ERROR_CODES,
  type ErrorCode,
  MwpError,
  type MwpErrorCode,
  type StoreErrorCode,
  categoryOf,
  isMwpErrorCode,
} from '../src/errors.js'
import {JcsError, canonicalize} from '../src/json/jcs.js'
import {JsonParseError, parseJsonBytes} from '../src/json/parse.js'
import {CommandBuildError} from '../src/operator/command-builder.js'
import {EventIntegrityError} from '../src/operator/transport.js'
import {RegistryEditError, RegistryFileError, initRegistry, readRegistryFile} from '../src/signing/registry-edit.js'
import {SignError} from '../src/signing/sign.js'
import {GroupCommitFailure} from '../src/store/group-commit.js'
import {StoreError} from '../src/store/records.js'
import {WireError} from '../src/wire/client.js'
import {json, mwp} from './support/cli.js'
import {PROJECT_ROOT} from './support/upstream.js'

const dir = mkdtempSync(join(tmpdir(), 'mwp-errors-'))
const missing = join(dir, 'absent.json')
afterAll(() => rmSync(dir, {recursive: true, force: true}))

function thrown(f: () => unknown): unknown {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error('expected a throw')
}

/** One instance of every error class, each raised by the code that raises it where that is cheap. */
const instances: Array<[string, abstract new (...args: never[]) => MwpError, unknown]> = [
  ['JcsError', JcsError, thrown(() => canonicalize(Number.NaN))],
  ['JsonParseError', JsonParseError, thrown(() => parseJsonBytes(Buffer.from('{"a": 1, "a": 2}')))],
  ['SignError', SignError, new SignError('signer-mismatch', 'm')],
  ['RegistryEditError', RegistryEditError, thrown(() => initRegistry('not a uri'))],
  ['RegistryFileError', RegistryFileError, thrown(() => readRegistryFile(missing))],
  ['OrgConfigError', OrgConfigError, thrown(() => loadOrgConfig(missing))],
  ['EventIntegrityError', EventIntegrityError, new EventIntegrityError('m')],
  ['CommandBuildError', CommandBuildError, new CommandBuildError('m')],
  ['KeyFileError', KeyFileError, thrown(() => readKeyFile(missing))],
  ['SessionError', SessionError, new SessionError('AUTH_FORBIDDEN')],
  ['ApplyError', ApplyError, new ApplyError('m')],
  ['AuthorityIntegrityError', AuthorityIntegrityError, new AuthorityIntegrityError('m')],
  ['CliFailure', CliFailure, usage('m')],
  ['CliRejection', CliRejection, new CliRejection('GROUP_NOT_FOUND', 'm')],
  ['StoreError', StoreError, new StoreError('unavailable', 'm')],
  ['GroupCommitFailure', GroupCommitFailure, new GroupCommitFailure('commit', new Error('disk I/O error'))],
  ['WireError', WireError, new WireError('HANDSHAKE_FAILED', 'm')],
  ['BundleError', BundleError, thrown(() => new BundleRoot(dir).bytes('../escape.json'))],
  ['ResultsError', ResultsError, thrown(() => readResults(join(dir, 'no-results.json'), dir))],
]

function sourceFiles(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : []
  })
}

describe('one error base', () => {
  it.each(instances)('%s is an MwpError with a code in MwpErrorCode', (name, cls, e) => {
    expect(e).toBeInstanceOf(cls)
    expect(e).toBeInstanceOf(MwpError)
    expect(e).toBeInstanceOf(Error)
    const error = e as MwpError
    expect(error.name).toBe(name)
    expect(isMwpErrorCode(error.code), error.code).toBe(true)
    expect(['rejected', 'usage', 'environment']).toContain(error.category)
  })

  it('no class in src/ or commands/ extends Error directly, module-private ones included', () => {
    const files = [...sourceFiles(join(PROJECT_ROOT, 'src')), ...sourceFiles(join(PROJECT_ROOT, 'commands'))]
    const offenders = files.flatMap((path) =>
      readFileSync(path, 'utf8')
        .split('\n')
        .filter(
          (line) => /\bclass \w+ extends (Error|TypeError|RangeError)\b/.test(line) && !path.endsWith('errors.ts'),
        )
        .map((line) => `${path}: ${line.trim()}`),
    )
    expect(offenders).toEqual([])
  })

  it('a wire code is a rejection; local codes are usage or environment; unknown codes are not codes', () => {
    for (const code of ERROR_CODES) expect(categoryOf(code)).toBe('rejected')
    expect(categoryOf('usage')).toBe('usage')
    expect(categoryOf('environment')).toBe('environment')
    expect(categoryOf('config-invalid')).toBe('usage')
    expect(categoryOf('io-error')).toBe('environment')
    expect(categoryOf('HANDSHAKE_FAILED')).toBe('environment')
    expect(isMwpErrorCode('no-such-code')).toBe(false)
    expect(isMwpErrorCode('io-error')).toBe(true)
  })

  it('JSON failures are PROTOCOL_VIOLATION with the rule kept as the protected reason', () => {
    const parse = thrown(() => parseJsonBytes(Buffer.from('{"a": 1, "a": 2}'))) as JsonParseError
    expect(parse.code).toBe('PROTOCOL_VIOLATION')
    expect(parse.reason).toBe('duplicate-member')
    const jcs = thrown(() => canonicalize(Number.NaN)) as JcsError
    expect(jcs.code).toBe('PROTOCOL_VIOLATION')
    expect(jcs.reason).toBe('non-finite-number')
  })

  it('a refused registry edit is INVALID_COMMAND, a malformed argument a usage error', () => {
    const malformed = thrown(() => initRegistry('not a uri')) as RegistryEditError
    expect(malformed.code).toBe('registry-argument-malformed')
    expect(malformed.category).toBe('usage')
    expect(new RegistryEditError('binding-exists', 'm').code).toBe('INVALID_COMMAND')
  })

  it('codes are typed by layer, and every layer code is an MwpErrorCode', () => {
    expectTypeOf<MwpError['code']>().toEqualTypeOf<MwpErrorCode>()
    expectTypeOf<StoreError['code']>().toEqualTypeOf<StoreErrorCode>()
    expectTypeOf<SessionError['code']>().toEqualTypeOf<ErrorCode>()
    expectTypeOf<JsonParseError['code']>().toEqualTypeOf<'PROTOCOL_VIOLATION'>()
    expectTypeOf<KeyFileError['code']>().toExtend<MwpErrorCode>()
    expectTypeOf<WireError['code']>().toExtend<MwpErrorCode>()
    // A switch over a code narrows to never after its cases: exhaustiveness is checkable.
    const exhaustive = (code: CliFailure['code']): number => {
      switch (code) {
        case 'usage':
          return EXIT.usage
        case 'environment':
          return EXIT.environment
        default: {
          const none: never = code
          return none
        }
      }
    }
    expect(exhaustive(usage('m').code)).toBe(2)
    expect(exhaustive(environment('m').code)).toBe(3)
  })
})

describe('cause goes through the standard option', () => {
  it('a key file that cannot be read keeps the file system error', () => {
    const e = thrown(() => readKeyFile(missing)) as KeyFileError
    expect(e.code).toBe('io-error')
    expect((e.cause as NodeJS.ErrnoException).code).toBe('ENOENT')
  })

  it('a configuration naming a missing key keeps the KeyFileError, which keeps the file system error', () => {
    const e = thrown(() => configKey(missing, 'authority key')) as OrgConfigError
    expect(e.code).toBe('config-unusable')
    expect(e.cause).toBeInstanceOf(KeyFileError)
    expect(((e.cause as KeyFileError).cause as NodeJS.ErrnoException).code).toBe('ENOENT')
  })

  it('a group commit failure and a CLI failure keep what they wrap', () => {
    const disk = new Error('disk I/O error')
    expect(new GroupCommitFailure('begin', disk).cause).toBe(disk)
    expect(environment('cannot read x', {cause: disk}).cause).toBe(disk)
    expect(new StoreError('unavailable', 'm', {cause: disk}).cause).toBe(disk)
    expect(new MwpError('unavailable', 'm').cause).toBeUndefined()
  })
})

describe('the CLI exits by the code category (0 ok, 1 rejected, 2 usage, 3 environment)', () => {
  const config = join(dir, 'bad.config.json')
  writeFileSync(config, '{"organization": ')
  const doc = join(dir, 'doc.json')
  writeFileSync(doc, '{"b": 1, "a": 2}')
  const duplicate = join(dir, 'duplicate.json')
  writeFileSync(duplicate, '{"a": 1, "a": 2}')

  it('ok: 0', () => {
    const r = mwp(['canonicalize', doc, '--json'])
    expect(r.status).toBe(EXIT.ok)
    expect(json(r).status).toBe('ok')
  })

  it('a wire code (a JsonParseError reaching the base): 1, with the protocol error object', () => {
    const r = mwp(['canonicalize', duplicate, '--json'])
    expect(r.status).toBe(EXIT.rejected)
    expect(json(r)).toMatchObject({status: 'rejected', error: {code: 'PROTOCOL_VIOLATION'}})
  })

  it('a usage code (an OrgConfigError config-invalid reaching the base): 2', () => {
    const r = mwp(['authority', 'serve', '--config', config, '--json'])
    expect(r.status).toBe(EXIT.usage)
    expect(json(r)).toMatchObject({status: 'error', error: {code: 'USAGE'}})
    expect(json(r).error.message).toMatch(/is not JSON/)
  })

  it('an environment code (an OrgConfigError config-unusable reaching the base): 3', () => {
    const r = mwp(['authority', 'serve', '--config', missing])
    expect(r.status).toBe(EXIT.environment)
    expect(r.stderr).toMatch(/^mwp: cannot read configuration .*absent\.json: ENOENT/)
  })
})
