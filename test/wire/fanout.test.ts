// Fan-out building blocks (src/wire/ws-framing.ts, frames.ts deliveryFrame): one delivery EVENT
// frame per Event, framed once for the socket and written unchanged to every subscriber. The
// frame bytes are decoded here by the ws library's own receiver — the parser every ws client runs.

import {createRequire} from 'node:module'
import {describe, expect, it} from 'vitest'
import {
  DELIVERY_FRAME_PREFIX,
  RECEIPT_FRAME_PREFIX,
  deliveryFrame,
  deliveryFrameId,
  parseFrame,
  receiptPosition,
} from '../../src/wire/frames.js'
import {serverTextFrame} from '../../src/wire/ws-framing.js'
import {feedEvent} from '../../src/wire/group-feed.js'

// ws's Receiver is not in its ESM entry's types; the CommonJS module exposes it.
const {Receiver} = createRequire(import.meta.url)('ws') as {
  Receiver: new (o: Record<string, unknown>) => NodeJS.EventEmitter & {write(b: Buffer): void}
}

/** The text messages a ws client reads from `bytes` (unmasked server frames). */
function received(bytes: Buffer): Promise<{text: string; binary: boolean}[]> {
  return new Promise((resolve, reject) => {
    const r = new Receiver({isServer: false, maxPayload: 0})
    const out: {text: string; binary: boolean}[] = []
    r.on('message', (data: Buffer, binary: boolean) => out.push({text: data.toString('utf8'), binary}))
    r.on('error', reject)
    r.write(bytes)
    setImmediate(() => resolve(out))
  })
}

describe('serverTextFrame', () => {
  it('frames text of every length class (7-bit, 16-bit, 64-bit) exactly as a ws client decodes it', async () => {
    const texts = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000].map((n) =>
      'é東🚀x'.repeat(Math.ceil(n / 4)).slice(0, n),
    )
    for (const text of texts) {
      const payload = Buffer.from(text, 'utf8')
      expect(await received(serverTextFrame(payload))).toEqual([{text, binary: false}])
    }
    // Several frames written back to back (one corked write) are several messages, in order.
    expect(await received(Buffer.concat(texts.slice(0, 4).map((t) => serverTextFrame(Buffer.from(t)))))).toEqual(
      texts.slice(0, 4).map((text) => ({text, binary: false})),
    )
  })

  it('a frame is never masked, fragmented or compressed: FIN + text opcode, mask bit clear', () => {
    const f = serverTextFrame(Buffer.from('{"a":1}'))
    expect(f[0]).toBe(0x81)
    expect(f[1]! & 0x80).toBe(0)
    expect(f.subarray(2).toString()).toBe('{"a":1}')
  })
})

describe('deliveryFrame', () => {
  const event = '{"eventId":"urn:uuid:00000000-0000-4000-8000-0000000000e1","sequence":7}'

  it('is a schema-valid EVENT frame around the exact Event text, its frameId derived from the Event ID', async () => {
    const [{text}] = await received(deliveryFrame('urn:uuid:00000000-0000-4000-8000-0000000000e1', event))
    const parsed = parseFrame(text!)
    expect(parsed.ok).toBe(true)
    expect(text).toContain(`"event":${event}}`)
    const frameId = (JSON.parse(text!) as {frameId: string}).frameId
    expect(frameId).toBe(`${DELIVERY_FRAME_PREFIX}urn:uuid:00000000-0000-4000-8000-0000000000e1`)
    // Never mistaken for an answer to the client's own Command.
    expect(frameId.startsWith(RECEIPT_FRAME_PREFIX)).toBe(false)
    expect(receiptPosition(frameId)).toBeNull()
    // The same Event gives the same bytes: built once, shared by every subscriber.
    expect(
      deliveryFrame('urn:uuid:00000000-0000-4000-8000-0000000000e1', event).equals(
        deliveryFrame('urn:uuid:00000000-0000-4000-8000-0000000000e1', event),
      ),
    ).toBe(true)
  })

  it('an Event ID too long for a 512-character frameId is named by its SHA-256; distinct IDs stay distinct', () => {
    const long = `urn:x:${'a'.repeat(500)}`
    const other = `urn:x:${'a'.repeat(499)}b`
    const id = deliveryFrameId(long)
    expect(id.length).toBeLessThanOrEqual(512)
    expect(id).toMatch(/^urn:mwp:delivery:sha256:[0-9a-f]{64}$/)
    expect(deliveryFrameId(other)).not.toBe(id)
    expect(deliveryFrameId('urn:uuid:1')).toBe('urn:mwp:delivery:urn:uuid:1')
  })

  it('built from the stored bytes (the feed) it is the frame of their text; the feed keeps those exact bytes as a view into the frame', async () => {
    // Non-ASCII text and an escaped character: the byte lengths differ from the string lengths.
    const text =
      '{"eventId":"urn:uuid:00000000-0000-4000-8000-0000000000e2","payload":{"text":"Grüße, \\"naïve\\" ☃ 𝄞"},"sequence":12345}'
    const bytes = new Uint8Array(Buffer.from(text, 'utf8'))
    const frame = deliveryFrame('urn:uuid:00000000-0000-4000-8000-0000000000e2', bytes)
    expect(frame.equals(deliveryFrame('urn:uuid:00000000-0000-4000-8000-0000000000e2', text))).toBe(true)
    expect((await received(frame))[0]!.text).toContain(`"event":${text}}`)
    const e = feedEvent({
      sequence: 12345,
      kind: 'message.posted',
      eventId: 'urn:uuid:00000000-0000-4000-8000-0000000000e2',
      bytes,
    })
    expect(e.frame.equals(frame)).toBe(true)
    expect(Buffer.compare(e.event, bytes)).toBe(0)
    expect(e.event.buffer).toBe(e.frame.buffer) // a view, not a second copy
  })
})
