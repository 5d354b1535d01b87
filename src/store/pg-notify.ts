// PostgreSQL fan-out of Group appends (ARCHITECTURE principle 7): every transaction that appends
// Events to a Group issues `pg_notify(APPENDED_CHANNEL, groupId)` for it, and every process
// sharing the database can LISTEN to learn of the append without polling.
//
// The notify is issued inside the appending transaction on purpose: PostgreSQL delivers it only
// when that transaction commits, never for a rolled-back one, and merges identical notifies of one
// transaction — exactly "a Group's head moved". A notify is a wake-up, not data: the listener
// re-reads the Group from the store, so a lost notify (listener reconnecting) only delays delivery
// until the next poll or the resync after the reconnect.

import type postgres from 'postgres'

/** The channel every append notifies, with the Group ID as payload. */
export const APPENDED_CHANNEL = 'mwp_group_appended'

/**
 * The channel every write of the membership index notifies, with each changed row's principal ID
 * as payload (member-table.ts postgresWriteMembers): a server learns whose Groups changed without
 * re-reading every connected principal's rows at every append of any Group.
 */
export const MEMBERS_CHANNEL = 'mwp_members_changed'

/**
 * PostgreSQL refuses a payload of 8000 bytes or more (and would abort the appending transaction):
 * longer Group IDs are not notified, and their subscribers rely on the server's poll.
 */
export const MAX_NOTIFY_PAYLOAD_BYTES = 7999

/**
 * The `RETURNING` clause that notifies for every row of `groups` the UPDATE moved, so the append's
 * head update carries its notify without another round trip. `groupIdColumn` names the updated
 * row's group_id (`g.group_id` when the table is aliased); it is a constant of the caller, never
 * input.
 */
export function notifyAppendedReturning(tx: postgres.TransactionSql, groupIdColumn: 'group_id' | 'g.group_id') {
  const column = tx.unsafe(groupIdColumn)
  return tx`RETURNING CASE WHEN octet_length(${column}) <= ${MAX_NOTIFY_PAYLOAD_BYTES} THEN pg_notify(${APPENDED_CHANNEL}, ${column}) END AS notified`
}

/** LISTENs on APPENDED_CHANNEL: `listener` gets each appended Group ID (listenChannel). */
export const listenAppends = (sql: postgres.Sql, listener: (groupId: string) => void, onResync?: () => void) =>
  listenChannel(sql, APPENDED_CHANNEL, listener, onResync)

/** LISTENs on MEMBERS_CHANNEL: `listener` gets the principal ID of each changed index row (listenChannel). */
export const listenMembers = (sql: postgres.Sql, listener: (principalId: string) => void, onResync?: () => void) =>
  listenChannel(sql, MEMBERS_CHANNEL, listener, onResync)

/**
 * LISTENs on `channel` on a dedicated connection of `sql` (the `postgres` library keeps one
 * for all listens and re-LISTENs after it reconnects). `listener` gets each notify's payload;
 * `onResync` runs after every re-LISTEN that follows a lost connection, when notifies sent
 * meanwhile are gone and the caller should re-read everything it watches. Resolves once
 * listening; the returned function stops it.
 */
async function listenChannel(
  sql: postgres.Sql,
  channel: string,
  listener: (payload: string) => void,
  onResync?: () => void,
): Promise<() => Promise<void>> {
  // The library re-registers a copy of the listener after a reconnect, which its original
  // `unlisten` no longer removes: `active` silences every copy once stopped.
  let active = true
  let listened = false
  const meta = await sql.listen(
    channel,
    (payload) => {
      if (active) listener(payload)
    },
    () => {
      if (listened && active) onResync?.()
      listened = true
    },
  )
  return async () => {
    if (!active) return
    active = false
    await meta.unlisten()
  }
}
