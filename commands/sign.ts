import {Args, Flags} from '@oclif/core'
import {KeyFileError, readKeyFile} from '../src/crypto/keyfile.js'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../src/cli/base.js'
import {documentKindFlag, keyFlag} from '../src/cli/flags.js'
import {parseJsonBytes} from '../src/json/parse.js'
import {type DocumentKind, PROFILES, detectKind} from '../src/signing/profiles.js'
import {SignError, sign} from '../src/signing/sign.js'

export default class Sign extends MwpCommand {
  static summary = 'Sign a document: fill its top-level signature envelope (spec §6.4).'
  static description = `Signs the JCS form of the document without its top-level signature, with pure Ed25519. signature.createdAt is set byte-identical to the protected signed time (issuedAt, occurredAt, createdAt, generatedAt or approvedAt, by kind), which must be UTC with an uppercase Z; --now sets it to the current time. The signed document is schema-checked before it is printed.

${exitCodesHelp({rejected: 'SCHEMA_VALIDATION_FAILED: the signed document would not conform to its schema', environment: 'cannot read the document or the key file'})}`

  static examples = [
    '<%= config.bin %> sign --document-kind command --key fixtures/keys/coordinator.key.json fixtures/unsigned/command.json',
    'cat draft.json | <%= config.bin %> sign --document-kind command --key alice.key.json --now - > signed.json',
  ]

  static args = {file: Args.string({description: 'Unsigned document, or - for stdin.', required: true})}
  static flags = {
    'document-kind': documentKindFlag(),
    key: keyFlag,
    now: Flags.boolean({description: 'Set the protected signed time to now (UTC).', default: false}),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(Sign)
    let key
    try {
      key = readKeyFile(flags.key)
    } catch (e) {
      if (e instanceof KeyFileError)
        throw e.code === 'io-error' ? environment(e.message) : usage(`${flags.key}: ${e.message}`)
      throw e
    }
    const value = parseJsonBytes(await this.readInput(args.file)) // not strict JSON: PROTOCOL_VIOLATION
    const kind = (flags['document-kind'] as DocumentKind | undefined) ?? detectKind(value)
    if (kind === null) throw usage('cannot tell which Signed Document kind this is; pass --document-kind')
    try {
      const signed = sign(kind, value, key, flags.now ? {now: new Date().toISOString()} : {})
      return {
        status: 'ok',
        result: {kind, signingHash: signed.signingHash, document: signed.document},
        text: JSON.stringify(signed.document, null, 2),
      }
    } catch (e) {
      if (!(e instanceof SignError)) throw e // a JcsError is a PROTOCOL_VIOLATION
      if (e.code === 'schema-invalid' || e.code === 'not-an-object')
        return {status: 'rejected', code: 'SCHEMA_VALIDATION_FAILED', note: e.message}
      throw usage(e.code === 'protected-time-not-utc-z' ? `${PROFILES[kind].timeField}: ${e.message}` : e.message)
    }
  }
}
