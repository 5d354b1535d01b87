import {Flags} from '@oclif/core'
import {readFileSync} from 'node:fs'
import {type Outcome, environment, exitCodesHelp, usage} from '../src/cli/base.js'
import {MwpError} from '../src/errors.js'
import {type GroupPolicySource, readSchedulingPolicy, watchSchedulingPolicy} from '../src/agent/scheduling-policy.js'
import {startConsole} from '../src/console/server.js'
import {isLoopbackHost} from '../src/wire/server.js'
import {operatorFlags} from '../src/operator/cli-context.js'
import {OperatorCommand} from '../src/operator/operator-command.js'

export default class Console extends OperatorCommand {
  static summary =
    'Serve a local web console for the operator: Missions, the Mission tree, live timelines, the WorkItem graph, approval and intervention.'
  static description = `Connects to the authority as you (the same flags as the mission commands; your key stays in this process and signs every action, the browser never sees it) and serves a web UI: the Missions you can see and what each awaits, a Mission's header, WorkItem graph with its critical path, timeline (Messages as conversation, never as instructions), budgets, leases, Artifacts (verified against their hash when opened) and Evidence; approve the exact submitted revision and Artifact set, request changes, cancel, direct or replace the Coordinator, approve a gated WorkItem's execution.

The page updates live: the console follows the authority's Events (reconnecting and resuming like group tail --follow) and pushes them to the page as server-sent events.

It prints its URL, with a per-start access token (?token=…), on stdout (--json: one JSON object with the url) and runs until SIGINT or SIGTERM (exit 0). Requests without the token, or the cookie the first request sets, are refused (403); so are POSTs from another origin. Loopback (127.0.0.0/8, ::1, localhost) needs no TLS; any other --host needs --tls-cert and --tls-key.

${exitCodesHelp({usage: 'a non-loopback --host without --tls-cert and --tls-key; an unusable --scheduling-policy file', environment: 'cannot read the configuration, a key or a TLS file; cannot reach the authority; cannot listen on the port'})}`

  static examples = [
    '<%= config.bin %> console',
    '<%= config.bin %> console --port 8080',
    '<%= config.bin %> console --host 0.0.0.0 --tls-cert console.pem --tls-key console.key --json',
  ]

  static flags = {
    ...operatorFlags,
    port: Flags.integer({description: 'Port to listen on (0: any free port).', default: 0, min: 0, max: 65535}),
    host: Flags.string({description: 'Address to listen on.', default: '127.0.0.1'}),
    'tls-cert': Flags.string({
      description: 'PEM certificate chain file.', // as authority serve's: one meaning per flag name
      dependsOn: ['tls-key'],
      env: 'MWP_CONSOLE_TLS_CERT',
    }),
    'tls-key': Flags.string({
      description: 'PEM private key file.',
      dependsOn: ['tls-cert'],
      env: 'MWP_CONSOLE_TLS_KEY',
    }),
    'scheduling-policy': Flags.string({
      description:
        "Organization scheduling policy (JSON) the Agents run under: the runtime view sets each Group's slot-time share against its weight.",
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(Console)
    if (!isLoopbackHost(flags.host) && (flags['tls-cert'] === undefined || flags['tls-key'] === undefined))
      throw usage(`--host ${flags.host} is not a loopback address: give --tls-cert and --tls-key`)
    const read = (path: string) => {
      try {
        return readFileSync(path)
      } catch (e) {
        throw environment(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
      }
    }
    const tls =
      flags['tls-cert'] !== undefined && flags['tls-key'] !== undefined
        ? {cert: read(flags['tls-cert']), key: read(flags['tls-key'])}
        : undefined
    // An unusable policy file is the Agent's usage error (exit 2), here as there; like the Agent,
    // the console re-reads it when it changes, and keeps the last good one over a broken edit.
    const policyFile = flags['scheduling-policy']
    let policy: GroupPolicySource | undefined
    let unwatch: (() => void) | undefined
    if (policyFile !== undefined) {
      let current = readSchedulingPolicy(policyFile)
      unwatch = watchSchedulingPolicy(
        policyFile,
        (p) => (current = p),
        (why) => process.stderr.write(`mwp: console keeps the last good scheduling policy: ${why}\n`),
      )
      policy = (groupId) => current(groupId)
    }
    // The watch's poll would keep the process alive after an error: it ends with the command.
    try {
      return await this.withContext(flags, async (ctx) => {
        const stopped = new Promise<string>((resolve) => {
          process.once('SIGINT', () => resolve('SIGINT'))
          process.once('SIGTERM', () => resolve('SIGTERM'))
        })
        let running
        try {
          running = await startConsole({
            ctx,
            host: flags.host,
            port: flags.port,
            ...(tls ? {tls} : {}),
            ...(policy ? {policy} : {}),
            log: (line) => process.stderr.write(`${line}\n`),
          })
        } catch (e) {
          if (e instanceof MwpError) throw e // a usage or environment error already, by its code
          throw environment(`cannot serve the console on ${flags.host}:${flags.port}: ${(e as Error).message}`)
        }
        // With --json this one line is the whole output (the envelope, printed as soon as there is a URL).
        if (flags.json) this.printJson({status: 'ok', result: {url: running.url}})
        else process.stdout.write(`${running.url}\n`)
        const signal = await stopped
        await running.close()
        process.stderr.write(`mwp: console stopped (${signal})\n`)
        return {status: 'streamed', exit: 'ok'}
      })
    } finally {
      unwatch?.()
    }
  }
}
