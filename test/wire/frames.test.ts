// Frame parsing (spec §17.1, §17.4; ACCEPTANCE J2, J7): strict JSON before the schema, the frame
// schema for every frame type, envelope-only checks for COMMAND and EVENT (their documents are
// verified with the six stages by their receiver), and the HELLO transcript's domain separation.

import {describe, expect, it} from 'vitest'
import {canonicalize} from '../../src/json/jcs.js'
import {eventFrame, frame, parseFrame, receiptFrameId, receiptPosition} from '../../src/wire/frames.js'
import {HELLO_DOMAIN, transcriptBytes} from '../../src/wire/hello.js'

const base = {protocolVersion: '0.1', frameId: 'urn:uuid:00000000-0000-4000-8000-000000000001'}

describe('parseFrame', () => {
  it('accepts every frame type the schema defines, in any member order', () => {
    const frames = [
      frame('PING', {nonce: 'QUJD', sentAt: '2026-07-01T00:00:00Z'}),
      frame('ACK', {acknowledgements: [{groupId: 'urn:g:1', sequence: 3}], sentAt: '2026-07-01T00:00:00Z'}),
      frame('SUBSCRIBE', {
        subscriptionId: 'urn:s:1',
        groups: [
          {groupId: 'urn:g:1', afterSequence: 0, attention: {eventKinds: ['message.posted'], mentionsOnly: true}},
        ],
      }),
      frame('ERROR', {
        error: {
          code: 'BACKPRESSURE',
          message: 'BACKPRESSURE',
          retryable: true,
          occurredAt: '2026-07-01T00:00:00Z',
          groupId: 'urn:g:1',
          retryAfterMs: 250,
        },
      }),
      frame('HELLO', {
        phase: 'client_init',
        agentId: 'urn:a:1',
        keyId: 'urn:k:1',
        clientNonce: 'QUJD',
        supportedVersions: ['0.1'],
      }),
      eventFrame('{"eventId":"urn:e:1"}'),
    ]
    for (const f of frames) expect(parseFrame(f).ok).toBe(true)
    const reordered = `{"sentAt":"2026-07-01T00:00:00Z","nonce":"QUJD","frameType":"PING","frameId":"${base.frameId}","protocolVersion":"0.1"}`
    expect(parseFrame(reordered).ok).toBe(true)
  })

  it('rejects malformed JSON and duplicate member names before the schema (PROTOCOL_VIOLATION)', () => {
    expect(parseFrame('{"protocolVersion":')).toMatchObject({ok: false, code: 'PROTOCOL_VIOLATION'})
    expect(parseFrame('[]')).toMatchObject({ok: false, code: 'PROTOCOL_VIOLATION'})
    const dup = `{"protocolVersion":"0.1","frameId":"${base.frameId}","frameType":"PING","nonce":"QUJD","n\\u006fnce":"QUJE","sentAt":"2026-07-01T00:00:00Z"}`
    expect(parseFrame(dup)).toMatchObject({ok: false, code: 'PROTOCOL_VIOLATION'})
  })

  it('rejects unknown frame types, unknown members and partial-stream frames (SCHEMA_VALIDATION_FAILED), echoing a usable frameId', () => {
    expect(parseFrame(JSON.stringify({...base, frameType: 'MESSAGE_CHUNK', chunk: 'x'}))).toEqual({
      ok: false,
      code: 'SCHEMA_VALIDATION_FAILED',
      frameId: base.frameId,
    })
    expect(
      parseFrame(JSON.stringify({...base, frameType: 'PING', nonce: 'QUJD', sentAt: '2026-07-01T00:00:00Z', extra: 1})),
    ).toMatchObject({ok: false, code: 'SCHEMA_VALIDATION_FAILED'})
    expect(parseFrame(JSON.stringify({...base, frameType: 'COMMAND', command: {}, extra: 1}))).toMatchObject({
      ok: false,
      code: 'SCHEMA_VALIDATION_FAILED',
    })
    expect(parseFrame(JSON.stringify({...base, frameType: 'COMMAND', command: []}))).toMatchObject({
      ok: false,
      code: 'SCHEMA_VALIDATION_FAILED',
    })
    expect(parseFrame(JSON.stringify({...base, frameType: 'COMMAND', command: {kind: 'x'}})).ok).toBe(true) // the Command itself is ingress's to verify
  })

  it('gives the document inside a COMMAND or EVENT frame exactly as received, not re-serialized', () => {
    const received = '{ "kind" : "message.post",  "payload":{"n":1.0} }'
    const parsed = parseFrame(
      `{"protocolVersion":"0.1","frameId":"${base.frameId}","frameType":"COMMAND","command":${received}}`,
    )
    if (!parsed.ok) throw new Error('not parsed')
    expect(parsed.source(parsed.frame.command as object)).toBe(received)
    expect(JSON.stringify(parsed.frame.command)).not.toBe(received)
  })
})

describe('receipt frame IDs', () => {
  it('carry the position of an answer Event and are distinguishable from delivery frames', () => {
    const id = receiptFrameId(2, 3)
    expect(receiptPosition(id)).toEqual({index: 2, count: 3})
    expect(receiptPosition('urn:uuid:00000000-0000-4000-8000-000000000001')).toBeNull()
    expect(parseFrame(eventFrame('{"a":1}', id)).ok).toBe(true)
  })
})

describe('HELLO transcript', () => {
  it('is the JCS of a domain-separated object binding both nonces, the challenge, the principal, the key and the version', () => {
    const t = {
      principalId: 'urn:a:1',
      keyId: 'urn:k:1',
      clientNonce: 'Q04',
      serverNonce: 'U04',
      challenge: 'Q0g',
      selectedVersion: '0.1',
    }
    const bytes = transcriptBytes(t).toString('utf8')
    expect(bytes).toBe(canonicalize({domain: HELLO_DOMAIN, ...t}))
    expect(JSON.parse(bytes).domain).toBe('missionweaveprotocol/0.1/hello')
    for (const k of Object.keys(t) as (keyof typeof t)[])
      expect(transcriptBytes({...t, [k]: `${t[k]}x`}).toString('utf8')).not.toBe(bytes)
  })
})
