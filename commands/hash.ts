import {Args} from '@oclif/core'
import {exitCodesHelp, MwpCommand, type Outcome} from '../src/cli/base.js'
import {documentKindFlag} from '../src/cli/flags.js'
import {canonicalHash} from '../src/json/jcs.js'
import {type JsonObject, parseJsonBytes} from '../src/json/parse.js'
import {type DocumentKind, detectKind} from '../src/signing/profiles.js'

export default class Hash extends MwpCommand {
  static summary = 'Print the signing hash of a Signed Document, or the JCS hash of any other JSON.'
  static description = `For a document with a top-level signature whose kind is known (--document-kind) or detected, prints its signing hash: sha256 of the JCS bytes without the top-level signature (spec §6.4). Otherwise prints sha256 of the JCS of the whole value. The hash is computed, not verified: use mwp verify to check the signature.

${exitCodesHelp({environment: 'cannot read FILE or standard input'})}`

  static examples = ['<%= config.bin %> hash fixtures/documents/command.json']
  static args = {file: Args.string({description: 'JSON file, or - for stdin.', required: true})}
  static flags = {'document-kind': documentKindFlag()}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(Hash)
    // Bytes that are not strict JSON, or a value JCS cannot encode, are rejected (PROTOCOL_VIOLATION) by base.
    const value = parseJsonBytes(await this.readInput(args.file))
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value)
    const kind =
      isObject && Object.hasOwn(value, 'signature')
        ? ((flags['document-kind'] as DocumentKind | undefined) ?? detectKind(value))
        : null
    if (kind !== null) {
      const {signature: _omitted, ...unsigned} = value as JsonObject
      const hash = canonicalHash(unsigned)
      return {status: 'ok', result: {hash, basis: 'signing', kind}, text: hash}
    }
    const hash = canonicalHash(value)
    return {status: 'ok', result: {hash, basis: 'jcs', kind: null}, text: hash}
  }
}
