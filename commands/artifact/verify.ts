import {Args, Flags} from '@oclif/core'
import {exitCodesHelp, MwpCommand, type Outcome, usage} from '../../src/cli/base.js'
import {contentHash} from '../../src/crypto/hash.js'
import {isContentHash} from '../../src/store/artifact-blobs.js'

export default class ArtifactVerify extends MwpCommand {
  static summary = 'Check locally that a file is the Artifact content a hash names (no server).'
  static description = `Hashes the file's exact bytes (sha256:<hex>, spec §13.1: content identity is the hash) and compares with --hash. A mismatch is rejected as SCHEMA_VALIDATION_FAILED (exit 1), the code the server gives a body that does not match its stated hash.

${exitCodesHelp({rejected: 'SCHEMA_VALIDATION_FAILED: the file does not match --hash', environment: 'cannot read FILE or standard input'})}`

  static examples = ['<%= config.bin %> artifact verify report.pdf --hash sha256:…']
  static args = {file: Args.string({description: 'File to check, or - for stdin.', required: true})}
  static flags = {hash: Flags.string({description: 'The expected content hash (sha256:<64 hex>).', required: true})}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(ArtifactVerify)
    if (!isContentHash(flags.hash))
      throw usage(`--hash ${flags.hash} is not a content hash (sha256:<64 lowercase hex>)`)
    const bytes = await this.readInput(args.file)
    const actual = contentHash(bytes)
    if (actual !== flags.hash)
      return {
        status: 'rejected',
        code: 'SCHEMA_VALIDATION_FAILED',
        text: `mismatch: ${args.file} hashes to ${actual}`,
        note: `expected ${flags.hash}`,
        extra: {contentHash: actual, expected: flags.hash},
      }
    return {status: 'ok', result: {contentHash: actual, sizeBytes: bytes.length}, text: `ok ${actual}`}
  }
}
