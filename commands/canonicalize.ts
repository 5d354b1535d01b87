import {Args} from '@oclif/core'
import {exitCodesHelp, MwpCommand, type Outcome} from '../src/cli/base.js'
import {sha256Hex} from '../src/crypto/hash.js'
import {canonicalize} from '../src/json/jcs.js'
import {parseJsonBytes} from '../src/json/parse.js'

export default class Canonicalize extends MwpCommand {
  static summary = 'Print the RFC 8785 (JCS) canonical form of a JSON document.'
  static description = `Reads exactly one strict UTF-8 JSON value and writes its JCS bytes. When stdout is a pipe the bytes are written exactly, without a trailing newline, so they can be hashed or signed.

${exitCodesHelp({environment: 'cannot read FILE or standard input'})}`

  static examples = ['<%= config.bin %> canonicalize fixtures/documents/command.json | sha256sum']
  static args = {file: Args.string({description: 'JSON file, or - for stdin.', required: true})}

  protected async execute(): Promise<Outcome> {
    const {args} = await this.parse(Canonicalize)
    // Bytes that are not strict JSON, or a value JCS cannot encode, are rejected (PROTOCOL_VIOLATION) by base.
    const jcs = canonicalize(parseJsonBytes(await this.readInput(args.file)))
    if (!this.argv.includes('--json') && !process.stdout.isTTY) {
      process.stdout.write(jcs)
      return {status: 'ok', result: null}
    }
    return {status: 'ok', result: {jcs, sha256: `sha256:${sha256Hex(jcs)}`}, text: jcs}
  }
}
