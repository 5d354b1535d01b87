import {Flags} from '@oclif/core'
import {grid, tableStyle} from '../../src/cli/output.js'
import {exitCodesHelp, MwpCommand, type Outcome, usage} from '../../src/cli/base.js'
import {storeFlag} from '../../src/cli/flags.js'
import {openConfiguredStore} from '../../src/cli/store.js'
import {isProfileTimestamp} from '../../src/json/timestamp.js'

export default class AuditList extends MwpCommand {
  static summary = 'List protected diagnostics: why documents and Commands were rejected (local operator only).'
  static description = `Every verification, freshness or admission failure recorded by mwp admit, mwp verify --store and the authority (time, stage, reason, document kind, signing hash where known) — these never go on the wire, where such a rejection carries only its code — and every Command the authority refused: the ingress stage (envelope, payload, policy, session, decision, …), the wire code as reason, the Command kind, the actor and Action ID as subject, and the authority's reason as detail.

${exitCodesHelp({environment: 'cannot open the store'})}`

  static examples = [
    '<%= config.bin %> audit list --store sqlite:mwp.db --since 2026-11-30T00:00:00Z',
    '<%= config.bin %> audit list --store sqlite:mwp.db --json',
  ]

  static flags = {
    store: storeFlag,
    since: Flags.string({description: 'Only entries at or after this protocol timestamp.'}),
    limit: Flags.integer({description: 'At most this many entries.', min: 1}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(AuditList)
    if (flags.since !== undefined && !isProfileTimestamp(flags.since))
      throw usage(`--since must be an RFC 3339 timestamp: ${flags.since}`)
    const store = await openConfiguredStore(flags.store)
    try {
      const rows = await store.listAudit({since: flags.since, limit: flags.limit})
      const table = grid(
        ['#', 'at', 'stage', 'reason', 'kind', 'signing hash', 'subject', 'detail'],
        rows.map((r) => [
          String(r.id),
          r.at,
          r.stage,
          r.reason,
          r.documentKind ?? '',
          r.signingHash ? r.signingHash.slice(0, 19) + '…' : '',
          r.subject ?? '',
          r.detail ?? '',
        ]),
        tableStyle(undefined),
      )
      return {status: 'ok', result: {entries: rows}, text: rows.length === 0 ? 'no audit entries' : table}
    } finally {
      await store.close()
    }
  }
}
