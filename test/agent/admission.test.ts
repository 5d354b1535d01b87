// Offer admission control (§10.3, §10.1): each structured decline reason, and acceptance.

import {describe, expect, it} from 'vitest'
import {type AdmissionInput, admit, versionAtLeast} from '../../src/agent/admission.js'
import type {WorkContract} from '../../src/authority/model/payloads.generated.js'
import {contract} from '../support/authority-helpers.js'

/** A complete Work Contract (the shape the offer Event carries). */
const workContract = (extra: Partial<WorkContract> = {}) => ({...contract(), ...extra}) as unknown as WorkContract

const now = Date.parse('2026-12-02T10:00:00Z')
const base = (): AdmissionInput => ({
  now,
  contract: workContract({
    deadline: '2026-12-03T00:00:00Z',
    requiredCapabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
  }),
  offerExpiresAt: '2026-12-02T10:05:00Z',
  capabilities: [{id: 'mwp.dev.general-work', version: '1.2.0'}],
  committed: 0,
  capacity: 4,
  authorizationEligible: true,
  unresolvedQuestions: [],
})

describe('offer admission control', () => {
  it('accepts an offer it can credibly commit to', () => {
    expect(admit(base())).toEqual({accept: true})
  })
  it.each<[string, (i: AdmissionInput) => void, string]>([
    ['capacity', (i) => (i.committed = 4), 'capacity'],
    ['an expired offer', (i) => (i.offerExpiresAt = '2026-12-02T09:59:59Z'), 'deadline'],
    ['a passed deadline', (i) => (i.contract!.deadline = '2026-12-02T09:00:00Z'), 'deadline'],
    ['a missing capability', (i) => (i.capabilities = [{id: 'other', version: '9.0.0'}]), 'capability'],
    [
      'an older capability version',
      (i) => (i.capabilities = [{id: 'mwp.dev.general-work', version: '0.9.9'}]),
      'capability',
    ],
    ['no contract', (i) => (i.contract = null), 'capability'],
    ['not eligible', (i) => (i.authorizationEligible = false), 'authorization'],
    ['no budget', (i) => (i.contract = {...i.contract!, budget: undefined as never}), 'budget'],
    ['an open ambiguity', (i) => (i.unresolvedQuestions = ['Which branch?']), 'ambiguity'],
  ])('declines %s', (_name, change, reason) => {
    const input = base()
    change(input)
    const answer = admit(input)
    expect(answer).toMatchObject({accept: false, reason})
  })
  it('compares versions numerically', () => {
    expect(versionAtLeast('1.10.0', '1.9.0')).toBe(true)
    expect(versionAtLeast('1.9.0', '1.10.0')).toBe(false)
    expect(versionAtLeast('2', '1.99.99')).toBe(true)
    expect(versionAtLeast('1.0', '1.0.0')).toBe(true)
  })
})
