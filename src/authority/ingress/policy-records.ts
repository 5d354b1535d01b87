// Glue between the cooperation policy Events and ingress: which Events are Policy Log facts
// (store/policy-log.ts explains the log), and which Organization policy lists let a service
// actor issue a Group Command it holds no Membership for.

import type {PolicyRecord} from '../../store/policy-log.js'
import {OVERRIDE_CONSUMED} from '../model/cooperation-state.js'
import type {AuthorityPolicy} from '../authority.js'
import type {EventDraft} from '../decide/common.js'

/** `{policyRecord}` for a grant issuance or consumption Event, `{}` for any other Event. */
export function policyRecordOf(draft: EventDraft): {policyRecord?: PolicyRecord} {
  if (draft.kind === 'policy.cooperation_override.granted') {
    const grant = draft.payload.grant as {grantId: string}
    return {policyRecord: {grantId: grant.grantId, action: 'issued', record: JSON.stringify(grant)}}
  }
  if (draft.kind === OVERRIDE_CONSUMED) {
    return {
      policyRecord: {
        grantId: draft.payload.grantId as string,
        action: 'consumed',
        record: JSON.stringify(draft.payload),
      },
    }
  }
  return {}
}

/** §20 `overrideIssuers` and §9.1 `redactors`: the service Commands Organization policy allows. */
export function servicePolicyAct(policy: AuthorityPolicy, kind: string, serviceId: string): boolean {
  if (kind === 'policy.grant_cooperation_override') return (policy.overrideIssuers ?? []).includes(serviceId)
  if (kind === 'message.redact') return (policy.redactors ?? []).includes(serviceId)
  return false
}
