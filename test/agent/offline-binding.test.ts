// The Worker side of §11.5 (ACCEPTANCE F11/F12): the binding a buffered Command carries, built
// only for already-active work inside the grace, and the rebase that re-signs the buffered
// Command under the current session, keeping the binding and the Action ID. The authority side
// (accepting and charging it) is test/authority/offline-execution.test.ts.

import {describe, expect, it} from 'vitest'
import {
  BOUNDED_OFFLINE_EXECUTION,
  OfflineBufferError,
  bufferCommand,
  offlineBinding,
  rebaseBuffered,
} from '../../src/agent/offline-binding.js'
import {verify} from '../../src/signing/verify.js'
import {developer, registry} from '../support/authority-helpers.js'

const execution = {
  agentId: developer.principal!.id,
  groupId: 'urn:uuid:00000000-0000-4000-8000-0000000000a1',
  workItemId: 'urn:uuid:00000000-0000-4000-8000-0000000000a2',
  sessionEpoch: 3,
  ownershipEpoch: 2,
  leaseId: 'urn:uuid:00000000-0000-4000-8000-0000000000a3',
  leaseExpiresAt: '2026-12-02T10:10:00.000Z',
}

describe('the bounded-offline-execution binding (§11.5)', () => {
  it('records the historical execution, the disconnect and buffer times and the grace deadline from the Organization grace', () => {
    const b = offlineBinding(
      execution,
      {disconnectedAt: '2026-12-02T10:05:00.000Z', bufferedAt: '2026-12-02T10:11:00.000Z', graceSeconds: 120},
      {modelTokens: 40},
    )
    expect(b).toEqual({
      ...execution,
      disconnectedAt: '2026-12-02T10:05:00.000Z',
      bufferedAt: '2026-12-02T10:11:00.000Z',
      graceDeadline: '2026-12-02T10:12:00.000Z',
      usageDelta: {modelTokens: 40},
    })
  })

  it('refuses to buffer work the Worker may not continue: disconnected after the lease expired, or past the grace', () => {
    expect(() =>
      offlineBinding(
        execution,
        {disconnectedAt: '2026-12-02T10:10:00.000Z', bufferedAt: '2026-12-02T10:10:30.000Z', graceSeconds: 120},
        {},
      ),
    ).toThrow(OfflineBufferError)
    expect(() =>
      offlineBinding(
        execution,
        {disconnectedAt: '2026-12-02T10:05:00.000Z', bufferedAt: '2026-12-02T10:12:00.000Z', graceSeconds: 120},
        {},
      ),
    ).toThrow(/grace deadline/)
  })

  it('buffers only progress Messages and checkpoints', () => {
    const b = offlineBinding(
      execution,
      {disconnectedAt: '2026-12-02T10:05:00.000Z', bufferedAt: '2026-12-02T10:06:00.000Z'},
      {},
    )
    expect(() => bufferCommand('work.submit', {}, b)).toThrow(OfflineBufferError)
    expect(bufferCommand('work.checkpoint', {workItemId: execution.workItemId}, b).kind).toBe('work.checkpoint')
  })

  it('the rebase signs the buffered Command with the current issuedAt, Session and Membership Epochs, the binding and Action ID unchanged', () => {
    const b = offlineBinding(
      execution,
      {disconnectedAt: '2026-12-02T10:05:00.000Z', bufferedAt: '2026-12-02T10:06:00.000Z'},
      {toolCalls: 2},
    )
    const buffered = bufferCommand('work.checkpoint', {workItemId: execution.workItemId, progress: 'half'}, b)
    const issuedAt = new Date().toISOString()
    const built = rebaseBuffered(developer, buffered, {issuedAt, sessionEpoch: 4, membershipEpoch: 7})
    expect(verify('command', built.bytes, registry).ok).toBe(true)
    expect(built.document).toMatchObject({
      actionId: buffered.actionId,
      kind: 'work.checkpoint',
      groupId: execution.groupId,
      issuedAt,
      sessionEpoch: 4,
      membershipEpoch: 7,
      extensions: {[BOUNDED_OFFLINE_EXECUTION]: {version: '0.1.0', critical: true, data: b}},
    })
    const renewed = rebaseBuffered(developer, buffered, {
      issuedAt,
      sessionEpoch: 4,
      membershipEpoch: 7,
      actionId: 'urn:uuid:00000000-0000-4000-8000-0000000000ff',
    })
    expect(renewed.actionId).toBe('urn:uuid:00000000-0000-4000-8000-0000000000ff')
  })
})
