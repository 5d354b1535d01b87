// The authoritative Policy Log (spec §20; ARCHITECTURE store contract "policy log for override
// grants and approvals"): one append-only row per issuance and per consumption of a Cooperation
// Override Grant, written by the Group log append in the same transaction as the Event that
// records it, so a grant is never issued or consumed without its log row, nor logged without its
// Event. Why a projection table and not only the Events: operators and auditors query grants by
// ID across Groups without folding every Group log, and the unique (grant_id, action) key makes
// the database itself refuse a second consumption even if two authority processes raced past
// their head checks.
//
// Why the consumption is also an Event (ext.missionweaveprotocol.core.cooperation_override_consumed,
// appended right after the target Command's Events in the same append): replay must reproduce
// "consumed" in the Group state from the log alone, and the Event links the consumption to the
// accepted target Event (§20 "consumption linked to the accepted Event").

/** What the authority attaches to a StoredEvent whose Event is a Policy Log fact. */
export interface PolicyRecord {
  grantId: string
  action: 'issued' | 'consumed'
  /** JSON text of the grant (issued) or of the consumption link (consumed). */
  record: string
}

/** A Policy Log row read back. */
export interface PolicyLogEntry extends PolicyRecord {
  groupId: string
  sequence: number
  eventId: string
}

export interface PolicyLogReader {
  /** The Group's Policy Log in sequence order. Throws StoreError('unavailable'). */
  policyLog(groupId: string): Promise<PolicyLogEntry[]>
}

export const POLICY_LOG_COLUMNS = ['group_id', 'sequence', 'event_id', 'grant_id', 'action', 'record'] as const

export const SQLITE_POLICY_LOG_SCHEMA = `
CREATE TABLE IF NOT EXISTS policy_log (
  group_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  action   TEXT NOT NULL CHECK (action IN ('issued', 'consumed')),
  record   TEXT NOT NULL,
  PRIMARY KEY (grant_id, action)
) STRICT;
CREATE INDEX IF NOT EXISTS policy_log_group ON policy_log (group_id, sequence);
CREATE TRIGGER IF NOT EXISTS policy_log_no_update BEFORE UPDATE ON policy_log
BEGIN SELECT RAISE(ABORT, 'policy_log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS policy_log_no_delete BEFORE DELETE ON policy_log
BEGIN SELECT RAISE(ABORT, 'policy_log is append-only'); END;
`

/** Needs mwp_append_only(), created earlier in the PostgreSQL schema. */
export const POSTGRES_POLICY_LOG_SCHEMA = `
CREATE TABLE IF NOT EXISTS policy_log (
  group_id TEXT NOT NULL,
  sequence BIGINT NOT NULL,
  event_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  action   TEXT NOT NULL CHECK (action IN ('issued', 'consumed')),
  record   TEXT NOT NULL,
  PRIMARY KEY (grant_id, action)
);
CREATE INDEX IF NOT EXISTS policy_log_group ON policy_log (group_id, sequence);
DROP TRIGGER IF EXISTS policy_log_append_only ON policy_log;
CREATE TRIGGER policy_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON policy_log
  FOR EACH STATEMENT EXECUTE FUNCTION mwp_append_only();
`

/** The Policy Log rows of one append (the Events that carry a policyRecord). */
export function policyRows(
  groupId: string,
  events: readonly {eventId: string; sequence: number; policyRecord?: PolicyRecord}[],
) {
  return events
    .filter((e) => e.policyRecord !== undefined)
    .map((e) => ({
      group_id: groupId,
      sequence: e.sequence,
      event_id: e.eventId,
      grant_id: e.policyRecord!.grantId,
      action: e.policyRecord!.action,
      record: e.policyRecord!.record,
    }))
}

export function policyEntryFrom(raw: Record<string, unknown>): PolicyLogEntry {
  return {
    groupId: String(raw.group_id),
    sequence: Number(raw.sequence),
    eventId: String(raw.event_id),
    grantId: String(raw.grant_id),
    action: raw.action === 'consumed' ? 'consumed' : 'issued',
    record: String(raw.record),
  }
}
