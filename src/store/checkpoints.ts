// Folded-state checkpoints of a Group (issue #15: O(1) cold start). A checkpoint is an
// optimization the Group Authority writes after a commit and reads on a cold start; the store
// only keeps the rows. It never trusts them either: the Authority signed each row with its service
// key, binds it to the exact bytes of the stored Event at its sequence, and verifies both before
// folding only the Events after it (src/authority/checkpoints.ts). Deleting every row changes
// nothing but the speed of the next cold start.
//
// Rows are not part of the append-only history: the newest KEEP per Group are kept, older ones
// pruned on write. The SQLite table comes with the store (sqlite.ts adds it to an older one when
// opened); on PostgreSQL it is created on first use, like the cursor table.

import type Database from 'better-sqlite3'
import type postgres from 'postgres'
import {lazyPostgresSchema} from './pg-lazy-schema.js'
import {StoreError, tableFailure} from './records.js'

export interface StoredCheckpoint {
  groupId: string
  /** The Group sequence the state was folded through. */
  sequence: number
  /** `sha256:` of the exact stored bytes of the Event at `sequence`. */
  eventHash: string
  /** JCS SHA-256 of the state (`sha256:` …): the hash of `state`, which are its canonical bytes. */
  stateHash: string
  /** The folded state's canonical JSON bytes. */
  state: Uint8Array
  /** The Authority key that signed the row. */
  keyId: string
  /** base64url Ed25519 signature over the row's binding (src/authority/checkpoints.ts). */
  signature: string
}

export interface CheckpointTable {
  /** Up to `limit` checkpoints of the Group with sequence <= `atMost`, newest first. */
  newest(groupId: string, atMost: number, limit: number): Promise<StoredCheckpoint[]>
  /** Stores the checkpoint (a second one at the same sequence replaces it) and prunes older ones. */
  put(checkpoint: StoredCheckpoint): Promise<void>
}

/** How many checkpoints per Group are kept: the newest, and older ones to fall back to. */
export const KEEP_CHECKPOINTS = 2

const fail = tableFailure('the checkpoint table')

/** Created with the store (and added when an older store is opened: sqlite.ts). */
export const SQLITE_CHECKPOINT_SCHEMA = `CREATE TABLE IF NOT EXISTS group_checkpoints (
    group_id   TEXT NOT NULL,
    sequence   INTEGER NOT NULL,
    event_hash TEXT NOT NULL,
    state_hash TEXT NOT NULL,
    state      BLOB NOT NULL,
    key_id     TEXT NOT NULL,
    signature  TEXT NOT NULL,
    PRIMARY KEY (group_id, sequence)
  ) STRICT`

const bindable = (v: Uint8Array) => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength))

/** The checkpoint write alone, synchronous: the store's writer runs it inside its group commit (sqlite-writes.ts). */
export function sqliteCheckpointPut(db: Database.Database): (checkpoint: StoredCheckpoint) => void {
  const upsert =
    db.prepare(`INSERT INTO group_checkpoints (group_id, sequence, event_hash, state_hash, state, key_id, signature)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (group_id, sequence) DO UPDATE SET event_hash = excluded.event_hash, state_hash = excluded.state_hash,
      state = excluded.state, key_id = excluded.key_id, signature = excluded.signature`)
  const prune = db.prepare(`DELETE FROM group_checkpoints WHERE group_id = ? AND sequence NOT IN
    (SELECT sequence FROM group_checkpoints WHERE group_id = ? ORDER BY sequence DESC LIMIT ${KEEP_CHECKPOINTS})`)
  return (c) => {
    upsert.run(c.groupId, c.sequence, c.eventHash, c.stateHash, bindable(c.state), c.keyId, c.signature)
    prune.run(c.groupId, c.groupId)
  }
}

function checkpointFrom(row: Record<string, unknown>): StoredCheckpoint {
  const state = row.state
  if (!(state instanceof Uint8Array)) throw new StoreError('unavailable', 'checkpoint state is not bytes')
  return {
    groupId: String(row.group_id),
    sequence: Number(row.sequence),
    eventHash: String(row.event_hash),
    stateHash: String(row.state_hash),
    state,
    keyId: String(row.key_id),
    signature: String(row.signature),
  }
}

/** Reads on `db`; `put` is the store writer's (sqlite-writes.ts), which owns every write. */
export function sqliteCheckpoints(db: Database.Database, put: CheckpointTable['put']): CheckpointTable {
  const select = db.prepare(
    'SELECT * FROM group_checkpoints WHERE group_id = ? AND sequence <= ? ORDER BY sequence DESC LIMIT ?',
  )
  return {
    newest: async (groupId, atMost, limit) => {
      try {
        return (select.all(groupId, atMost, limit) as Record<string, unknown>[]).map(checkpointFrom)
      } catch (e) {
        return fail(e)
      }
    },
    put: async (checkpoint) => {
      try {
        await put(checkpoint)
      } catch (e) {
        fail(e)
      }
    },
  }
}

export function postgresCheckpoints(sql: postgres.Sql): CheckpointTable {
  const ensure = lazyPostgresSchema(
    sql,
    'mwp group checkpoints',
    `CREATE TABLE IF NOT EXISTS group_checkpoints (
      group_id   TEXT NOT NULL,
      sequence   BIGINT NOT NULL,
      event_hash TEXT NOT NULL,
      state_hash TEXT NOT NULL,
      state      BYTEA NOT NULL,
      key_id     TEXT NOT NULL,
      signature  TEXT NOT NULL,
      PRIMARY KEY (group_id, sequence))`,
    fail,
  )
  return {
    newest: async (groupId, atMost, limit) => {
      await ensure()
      try {
        const rows = await sql`SELECT * FROM group_checkpoints WHERE group_id = ${groupId} AND sequence <= ${atMost}
          ORDER BY sequence DESC LIMIT ${limit}`
        return rows.map(checkpointFrom)
      } catch (e) {
        return fail(e)
      }
    },
    put: async (c) => {
      await ensure()
      try {
        await sql.begin(async (tx) => {
          await tx`INSERT INTO group_checkpoints (group_id, sequence, event_hash, state_hash, state, key_id, signature)
            VALUES (${c.groupId}, ${c.sequence}, ${c.eventHash}, ${c.stateHash}, ${bindable(c.state)}, ${c.keyId}, ${c.signature})
            ON CONFLICT (group_id, sequence) DO UPDATE SET event_hash = excluded.event_hash,
              state_hash = excluded.state_hash, state = excluded.state, key_id = excluded.key_id, signature = excluded.signature`
          await tx`DELETE FROM group_checkpoints WHERE group_id = ${c.groupId} AND sequence NOT IN
            (SELECT sequence FROM group_checkpoints WHERE group_id = ${c.groupId} ORDER BY sequence DESC LIMIT ${KEEP_CHECKPOINTS})`
        })
      } catch (e) {
        fail(e)
      }
    },
  }
}
