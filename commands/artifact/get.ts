import {Args, Flags} from '@oclif/core'
import {writeFileSync} from 'node:fs'
import {type Outcome, environment, usage, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {artifactStore} from '../../src/operator/artifacts.js'
import {OperatorCommand, READING_CODES} from '../../src/operator/operator-command.js'

export default class ArtifactGet extends OperatorCommand {
  static summary = 'Fetch Artifact content from a Group by its content hash, verified before it is written.'
  static description = `Fetches over HTTPS from the authority server with this principal's session (reading needs what subscribing to the Group needs). The bytes are hashed before anything is written: content that does not match HASH is refused (exit 3) and --out is left untouched. A Group that is unknown or not visible to you, and an Artifact it does not hold, are the same GROUP_NOT_FOUND (exit 1).

${exitCodesHelp(READING_CODES)}`

  static examples = [
    '<%= config.bin %> artifact get sha256:… --group G --out report.pdf',
    '<%= config.bin %> artifact get sha256:… --group G --out - | tar x',
  ]
  static args = {hash: Args.string({description: 'Content hash (sha256:<64 hex>).', required: true})}
  static flags = {
    ...operatorFlags,
    group: Flags.string({char: 'g', description: 'Group ID the Artifact belongs to.', required: true}),
    out: Flags.string({char: 'o', description: 'File to write, or - for stdout.', required: true}),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(ArtifactGet)
    // stdout carries either the bytes or the one JSON envelope, never both.
    if (flags.out === '-' && this.argv.includes('--json'))
      throw usage('--out - writes the content to stdout: drop --json')
    return this.withContext(flags, async (ctx) => {
      const bytes = await (await artifactStore(ctx)).get(flags.group, args.hash)
      if (flags.out === '-') {
        await new Promise<void>((resolve, reject) => process.stdout.write(bytes, (e) => (e ? reject(e) : resolve())))
        return {status: 'streamed', exit: 'ok'}
      }
      try {
        writeFileSync(flags.out, bytes)
      } catch (e) {
        throw environment(`cannot write ${flags.out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
      }
      return {
        status: 'ok',
        result: {contentHash: args.hash, sizeBytes: bytes.length, out: flags.out},
        text: `${args.hash} → ${flags.out} (${bytes.length} bytes)`,
      }
    })
  }
}
