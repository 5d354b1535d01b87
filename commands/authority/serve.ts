import {Flags, type Interfaces} from '@oclif/core'
import {readFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {storeFlag} from '../../src/cli/flags.js'
import {DEFAULT_CONFIG_FILE, loadOrgConfig, openAuthorityFromConfig} from '../../src/config/org-config.js'
import {DEFAULT_ARTIFACT_MAX_BYTES} from '../../src/store/artifact-blobs.js'
import {writeDevTls} from '../../src/wire/dev-tls.js'
import {tuneHeapForServing} from '../../src/wire/serving-heap.js'
import {DEFAULT_DELIVERY_BATCH_MS, type TlsSetting, isLoopbackHost, startServer} from '../../src/wire/server.js'

// Typed so that the class's declaration can name the flag's type (declaration emit).
const storeOverride: Interfaces.OptionFlag<string | undefined> = {
  ...storeFlag,
  description: 'Store URL overriding the configuration: sqlite:PATH or postgres://…',
}

export default class AuthorityServe extends MwpCommand {
  static summary = 'Run the Group Authority behind the MissionWeaveProtocol WebSocket binding (wss, TLS 1.3 only).'
  static description = `Reads the Organization configuration (--config, MWP_CONFIG, default ${DEFAULT_CONFIG_FILE}): registry, authority and admission keys, store, policy and server endpoint. Serves HELLO (Session Epochs), SUBSCRIBE, COMMAND, ACK and PING until SIGINT or SIGTERM, then shuts down gracefully. Structured logs go to stderr as JSON lines.

Artifacts (spec §13.1): the same listener serves PUT and GET /mwp/0.1/groups/{groupId}/artifacts/{hash} over HTTPS, authenticated by a live session's token (Authorization: Bearer). Their bytes are files beside a SQLite store (<store file>.artifacts/), never in the Group log; a PostgreSQL store needs --artifact-dir (a directory every server of that store shares), else the Artifact routes are not served.

Capability tokens (spec §12): POST /mwp/0.1/groups/{groupId}/work-items/{workItemId}/token issues the token of the caller's current execution (the caller is its session's Agent and Session Epoch, never the request body), and GET /mwp/0.1/authz/key serves the public key tool services verify tokens with offline. Tokens are signed with the authority key (authorityKey in the configuration): their signature domain keeps them apart from signed documents.

TLS: --tls-cert/--tls-key (or the configuration's server.tls), or --dev-tls to generate a throwaway development CA and a loopback certificate (the CA file path is printed; give it to clients). Plain ws only with --insecure-loopback, which refuses any non-loopback bind.

${exitCodesHelp({environment: 'cannot read the configuration, a key or a TLS file; cannot open the store or listen on the port'})}`

  static examples = [
    '<%= config.bin %> authority serve --config mwp.config.json --dev-tls',
    '<%= config.bin %> authority serve --config mwp.config.json --tls-cert server.pem --tls-key server.key --store postgres://mwp@127.0.0.1:5432/mwp',
  ]

  static flags = {
    config: Flags.string({
      char: 'c',
      description: 'Organization configuration file.',
      env: 'MWP_CONFIG',
      default: DEFAULT_CONFIG_FILE,
    }),
    store: storeOverride,
    host: Flags.string({description: 'Bind address (default: the configuration, else 127.0.0.1).'}),
    port: Flags.integer({
      description: 'Port (default: the configuration, else 7443; 0 picks a free one).',
      env: 'MWP_PORT',
      min: 0,
      max: 65535,
    }),
    'tls-cert': Flags.string({description: 'PEM certificate chain file.', dependsOn: ['tls-key']}),
    'tls-key': Flags.string({description: 'PEM private key file.', dependsOn: ['tls-cert']}),
    'dev-tls': Flags.boolean({
      description:
        'Generate a development CA and loopback certificate (written next to the configuration, in dev-tls/).',
      default: false,
    }),
    'insecure-loopback': Flags.boolean({
      description: 'Plain ws without TLS, loopback addresses only (development).',
      default: false,
      exclusive: ['tls-cert', 'dev-tls'],
    }),
    'artifact-dir': Flags.string({
      description:
        'Directory of Artifact content (default: <store file>.artifacts beside a SQLite store; required to serve Artifacts from a PostgreSQL store).',
      env: 'MWP_ARTIFACT_DIR',
    }),
    'artifact-max-bytes': Flags.integer({
      description: 'Largest Artifact accepted, in bytes.',
      default: DEFAULT_ARTIFACT_MAX_BYTES,
      min: 1,
    }),
    'delivery-batch-ms': Flags.integer({
      description:
        "A busy Group's subscribers are written at most once per this many ms; the Events appended meanwhile share one socket write. The first Event after a quiet spell goes at once. 0: write at every append.",
      default: DEFAULT_DELIVERY_BATCH_MS,
      min: 0,
      max: 1000,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(AuthorityServe)
    let config = loadOrgConfig(flags.config) // an OrgConfigError exits by its code
    if (flags.store) config = {...config, store: flags.store}
    const host = flags.host ?? config.server.host
    const port = flags.port ?? config.server.port

    let tls: TlsSetting
    let caFile: string | undefined
    const read = (path: string) => {
      try {
        return readFileSync(path)
      } catch (e) {
        throw environment(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
      }
    }
    if (flags['insecure-loopback']) {
      if (!isLoopbackHost(host))
        throw usage(`--insecure-loopback refuses to bind ${host}: use a loopback address or TLS`)
      tls = 'insecure-loopback'
    } else if (flags['tls-cert'] && flags['tls-key']) {
      tls = {cert: read(flags['tls-cert']), key: read(flags['tls-key'])}
    } else if (flags['dev-tls'] || (config.server.dev && !config.server.tls)) {
      if (!isLoopbackHost(host)) throw usage(`--dev-tls certifies loopback names only; ${host} is not one`)
      const made = writeDevTls(join(config.dir, 'dev-tls'))
      tls = {cert: made.cert, key: made.key}
      caFile = made.caFile
    } else if (config.server.tls) {
      tls = {cert: read(config.server.tls.cert), key: read(config.server.tls.key)}
      caFile = config.server.tls.ca
    } else {
      throw usage(
        'no TLS material: give --tls-cert and --tls-key, --dev-tls, or server.tls in the configuration (or --insecure-loopback)',
      )
    }

    const opened = await openAuthorityFromConfig(config)
    tuneHeapForServing()
    let server
    try {
      server = await startServer({
        authority: opened.authority,
        host,
        port,
        tls,
        deliveryBatchMs: flags['delivery-batch-ms'],
        artifactMaxBytes: flags['artifact-max-bytes'],
        ...(flags['artifact-dir'] !== undefined ? {artifactDir: resolve(flags['artifact-dir'])} : {}),
      })
    } catch (e) {
      await opened.close()
      if ((e as {code?: string}).code === 'EADDRINUSE')
        throw environment(
          `cannot serve on ${host}:${port}: the port is in use (is another mwp authority serve running?); stop it, or give --port (0: any free port)`,
        )
      throw environment(`cannot serve on ${host}:${port}: ${(e as Error).message}`)
    }
    if (!this.argv.includes('--json')) {
      process.stdout.write(`listening on ${server.url}\n${caFile ? `CA file: ${caFile}\n` : ''}`)
    }
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'))
      process.once('SIGTERM', () => resolve('SIGTERM'))
    })
    await server.close()
    await opened.close()
    return {
      status: 'ok',
      result: {url: server.url, ...(caFile ? {caFile} : {}), stoppedBy: signal},
      text: `stopped (${signal})`,
    }
  }
}
