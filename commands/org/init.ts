import {Args, Flags} from '@oclif/core'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {createDevOrganization} from '../../src/config/dev-org.js'
import {DEFAULT_HOST, DEFAULT_PORT, OrgConfigError} from '../../src/config/org-config.js'
import {devTlsHook} from '../../src/config/dev-tls-hook.js'
import {isIdentifier} from '../../src/signing/registry.js'

export default class OrgInit extends MwpCommand {
  static summary =
    'Create a development Organization in DIR: keys, registry, signed Agent Cards registered with its embedded store, and mwp.config.json.'
  static description = `One step to a working development Organization: Ed25519 keys for the Organization registry service (signs Agent Cards), the Group Authority, the admission service, a human MissionOwner (owner) and Agents (coordinator, worker-1 … worker-N); the registry binding them; a signed Agent Card per Agent; development TLS material when available; and DIR/mwp.config.json, which \`mwp authority serve --config\` and the operator commands (\`--config\`, or run them in DIR) read. The MissionOwner key is the configuration's operatorKey.

Refuses a non-empty DIR (exit 3) unless --force. These keys are for development only.

${exitCodesHelp({environment: 'DIR is not empty (without --force) or cannot be written'})}`

  static examples = [
    '<%= config.bin %> org init dev-org',
    '<%= config.bin %> org init dev-org --organization urn:example:org:acme --workers 3 --json',
  ]

  static args = {
    dir: Args.string({description: 'Directory to create the Organization in (created when missing).', required: true}),
  }
  static flags = {
    organization: Flags.string({description: 'Organization ID (absolute URI).', default: 'urn:mwp:dev:org:local'}),
    workers: Flags.integer({
      description: 'Number of worker Agents besides the Coordinator.',
      default: 2,
      min: 0,
      max: 50,
    }),
    host: Flags.string({description: 'Server host written to the configuration.', default: DEFAULT_HOST}),
    port: Flags.integer({
      description: 'Server port written to the configuration.',
      default: DEFAULT_PORT,
      min: 0,
      max: 65535,
    }),
    force: Flags.boolean({
      description: 'Write into a non-empty directory, replacing an earlier Organization there.',
      default: false,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(OrgInit)
    if (!isIdentifier(flags.organization))
      throw usage(`--organization must be an absolute URI identifier: ${flags.organization}`)
    let org
    try {
      org = await createDevOrganization(args.dir, {
        organization: flags.organization,
        workers: flags.workers,
        host: flags.host,
        port: flags.port,
        force: flags.force,
        devTls: devTlsHook,
      })
    } catch (e) {
      if (e instanceof OrgConfigError) throw e // reported by its code
      throw environment(`cannot create the Organization in ${args.dir}: ${(e as Error).message}`, {cause: e})
    }
    const lines = [
      `created Organization ${org.organization} in ${org.dir}`,
      `  config:   ${org.config}`,
      `  registry: ${org.registry}`,
      `  store:    ${org.store}`,
      `  server:   ${org.url}`,
      ...org.identities.map(
        (i) =>
          `  ${i.name.padEnd(13)} ${i.principal.type.padEnd(7)} ${i.principal.id}  ${i.keyFile}${i.card ? `  ${i.card}` : ''}`,
      ),
      `next: cd ${args.dir} && mwp authority serve, then mwp mission create --objective "…" --coordinator coordinator`,
    ]
    return {status: 'ok', result: org, text: lines.join('\n')}
  }
}
