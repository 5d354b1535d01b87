import {Args, Flags} from '@oclif/core'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {artifactStore} from '../../src/operator/artifacts.js'
import {OperatorCommand, SENDING_CODES} from '../../src/operator/operator-command.js'

export default class ArtifactPut extends OperatorCommand {
  static summary = "Store a file's bytes as Artifact content in a Group; prints the content hash."
  static description = `Sends the bytes over HTTPS to the authority server (the same TLS listener and CA trust as the WebSocket binding), authenticated by this principal's session; the server checks them against the hash computed here and keeps them outside the Group log (spec §13.1). Only an active member of the Group may put. Publishing the signed manifest that names the hash is a separate Command (artifact.publish).

${exitCodesHelp(SENDING_CODES)}`

  static examples = [
    '<%= config.bin %> artifact put report.pdf --group G',
    'tar c out/ | <%= config.bin %> artifact put - --group G',
  ]
  static args = {file: Args.string({description: 'File to store, or - for stdin.', required: true})}
  static flags = {
    ...operatorFlags,
    group: Flags.string({char: 'g', description: 'Group ID the Artifact belongs to.', required: true}),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(ArtifactPut)
    const bytes = await this.readInput(args.file)
    return this.withContext(flags, async (ctx) => {
      const hash = await (await artifactStore(ctx)).put(flags.group, bytes)
      return {status: 'ok', result: {contentHash: hash, sizeBytes: bytes.length, groupId: flags.group}, text: hash}
    })
  }
}
