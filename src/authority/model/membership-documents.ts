// The Membership documents (§8) an Event payload carries: the one place that knows which Event
// kinds grant, change, activate or end a Membership and where in the payload the document sits.
// The store's membership index (store/member-table.ts) is derived from exactly this list, at
// append (ingress/seal.ts) and when an older store is backfilled, so the two cannot disagree.
//
// Type imports only: the store imports this module, and must not pull the authority in with it.

import type {EventKind, EventPayloads, MembershipDocument} from './events.js'

type Carriers = {[K in EventKind]?: (payload: EventPayloads[K]) => readonly MembershipDocument[]}

const CARRIERS: Carriers = {
  'mission.created': (p) => [p.membership],
  'mission.follow_up.created': (p) => [p.membership],
  'mission.coordinator.assigned': (p) => [p.membership],
  'membership.changed': (p) => [p.membership],
  'membership.ended': (p) => [p.membership],
  'work.offer.created': (p) => p.provisionalMemberships ?? [],
  'work.offer.accepted': (p) => (p.activatedMembership !== undefined ? [p.activatedMembership] : []),
}

/** The Event kinds whose payload may carry a Membership document (the backfill reads only these). */
export const MEMBERSHIP_EVENT_KINDS: readonly string[] = Object.keys(CARRIERS)

/**
 * The Membership documents in the payload of an Event of `kind`, in payload order (none for any
 * other kind). The payload is the one this authority drafted for the kind (events.ts knownEvent):
 * a payload without the member is a document of another shape, and yields nothing.
 */
export function membershipDocumentsOf(kind: string, payload: unknown): readonly MembershipDocument[] {
  if (!Object.hasOwn(CARRIERS, kind) || typeof payload !== 'object' || payload === null) return []
  const carrier = CARRIERS[kind as keyof Carriers] as (p: unknown) => readonly (MembershipDocument | undefined)[]
  return carrier(payload).filter((d): d is MembershipDocument => typeof d === 'object' && d !== null)
}
