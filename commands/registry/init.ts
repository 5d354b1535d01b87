import {Flags} from '@oclif/core'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {
  classifyEditFailure,
  initRegistry,
  serializeRegistry,
  writeNewRegistryFile,
} from '../../src/signing/registry-edit.js'

export default class RegistryInit extends MwpCommand {
  static summary = 'Create an empty Organization registry snapshot file.'
  static description = `Writes {organizationId, bindings: []} to --out. The file is not usable as Registry evidence until a binding is added with \`mwp registry add\` (\`mwp registry check\` reports it as registry-empty). An existing file is never replaced unless --force is given (exit 3).

${exitCodesHelp({environment: '--out exists already (without --force) or cannot be written'})}`

  static examples = ['<%= config.bin %> registry init --organization urn:example:organization:acme --out registry.json']

  static flags = {
    organization: Flags.string({description: 'Organization ID (absolute URI).', required: true}),
    out: Flags.string({char: 'o', description: 'Registry file to create.', env: 'MWP_REGISTRY', required: true}),
    force: Flags.boolean({description: 'Replace an existing file.', default: false}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(RegistryInit)
    try {
      const reg = initRegistry(flags.organization)
      writeNewRegistryFile(flags.out, reg, flags.force)
      process.stderr.write(`mwp: created ${flags.out}; add a binding with \`mwp registry add\` before using it\n`)
      return {status: 'ok', result: {file: flags.out, registry: reg}, text: serializeRegistry(reg).trimEnd()}
    } catch (e) {
      const f = classifyEditFailure(e)
      if (!f) throw e
      throw f.kind === 'environment' ? environment(f.message) : usage(`--organization: ${f.message}`)
    }
  }
}
