// WebSocket frames (spec §17.1, schemas/websocket-frame.schema.json): strict parsing, schema
// validation, and builders. Every message is one UTF-8 JSON text frame; the strict parser rejects
// duplicate member names before the schema runs (§17.4, J7).
//
// Conventions this binding adds on top of the schema (all frames stay schema-valid):
//   - COMMAND answer: an accepted Command is answered with the EVENT frames of the Events it
//     produced (the stored signed bytes; for an idempotent retry, the original Events). Their
//     frameIds are `urn:mwp:receipt:<i>-of-<n>:<uuid>` so the client knows when the answer is
//     complete; each Event's `cause.id` names the Action ID. A refused Command is one ERROR frame
//     with relatedFrameId (the COMMAND's frameId) and relatedActionId.
//   - Delivery EVENT frames (subscriptions) carry frameId `urn:mwp:delivery:<Event ID>`
//     (deliveryFrameId): one frame text per Event, shared by every subscriber.
//   - Server ACK: "delivered through": every sequence up to `sequence` in that Group was either
//     delivered on this connection or deliberately not delivered (attention filter, or before the
//     Membership's visibility start). A sequence not covered by a server ACK and not delivered is
//     missing, never filtered (§16 gap rule).
//   - BACKPRESSURE and CURSOR_TOO_OLD are ERROR frames carrying `groupId` (and `retryAfterMs`,
//     resp. the signed snapshot reference in `snapshotArtifactHash` + `details.snapshot`).

import {createHash, randomUUID} from 'node:crypto'
import {type ErrorCode, type ProtocolError, protocolError} from '../errors.js'
import {
  type JsonObject,
  JsonParseError,
  MAX_DEPTH,
  type SourceOf,
  type SourceTexts,
  parseJsonText,
} from '../json/parse.js'
import {schemaCatalog} from '../schema/catalog.js'
import {serverTextFrame} from './ws-framing.js'

export const PROTOCOL_VERSION = '0.1'
export const RECEIPT_FRAME_PREFIX = 'urn:mwp:receipt:'
export const DELIVERY_FRAME_PREFIX = 'urn:mwp:delivery:'

export type FrameType = 'HELLO' | 'SUBSCRIBE' | 'COMMAND' | 'EVENT' | 'ACK' | 'PING' | 'ERROR'

export interface Frame extends JsonObject {
  protocolVersion: string
  frameId: string
  frameType: FrameType
}

export const newFrameId = (): string => `urn:uuid:${randomUUID()}`

export type ParsedFrame =
  | {
      ok: true
      frame: Frame
      /** The exact text an object of the frame was received as: documents inside frames are verified from it, never re-serialized. */
      source: SourceOf
    }
  | {ok: false; code: ErrorCode; frameId?: string}

/**
 * Parses and validates one text message. COMMAND and EVENT frames are validated for their
 * envelope only: the document inside is a Signed Document that its receiver verifies with the six
 * stages (ingress for a Command, with audit; the client for an Event), schema stage included.
 */
export function parseFrame(text: string): ParsedFrame {
  let value: unknown
  const sources: SourceTexts = new WeakMap()
  const source: SourceOf = (o) => sources.get(o)
  try {
    // A COMMAND or EVENT frame holds a Signed Document one level down: the document may nest as
    // deep as the verifier allows on its own (MAX_DEPTH), so the frame one level more.
    value = parseJsonText(text, sources, {maxDepth: MAX_DEPTH + 1})
  } catch (e) {
    if (e instanceof JsonParseError) return {ok: false, code: 'PROTOCOL_VIOLATION'}
    throw e
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return {ok: false, code: 'PROTOCOL_VIOLATION'}
  const o = value as JsonObject
  const frameId =
    typeof o.frameId === 'string' && /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(o.frameId) && o.frameId.length <= 512
      ? o.frameId
      : undefined
  const member = o.frameType === 'COMMAND' ? 'command' : o.frameType === 'EVENT' ? 'event' : null
  if (member !== null) {
    const keys = Object.keys(o).sort().join(',')
    const inner = o[member]
    const ok =
      keys === [member, 'frameId', 'frameType', 'protocolVersion'].sort().join(',') &&
      o.protocolVersion === PROTOCOL_VERSION &&
      frameId !== undefined
    if (!ok || inner === null || typeof inner !== 'object' || Array.isArray(inner))
      return {ok: false, code: 'SCHEMA_VALIDATION_FAILED', frameId}
    return {ok: true, frame: o as Frame, source}
  }
  const validate = schemaCatalog().validator('websocket-frame')
  if (!(validate(o) as boolean))
    return {
      ok: false,
      code: typeof o.frameType === 'string' ? 'SCHEMA_VALIDATION_FAILED' : 'PROTOCOL_VIOLATION',
      frameId,
    }
  return {ok: true, frame: o as Frame, source}
}

export function frame(frameType: FrameType, members: JsonObject): string {
  return JSON.stringify({protocolVersion: PROTOCOL_VERSION, frameId: newFrameId(), frameType, ...members})
}

/** An EVENT frame's text up to the Event; the Event and a closing brace complete it. */
const eventFrameHead = (frameId: string) =>
  `{"protocolVersion":"${PROTOCOL_VERSION}","frameId":${JSON.stringify(frameId)},"frameType":"EVENT","event":`

/** An EVENT frame around the exact stored signed bytes (never re-serialized). */
export function eventFrame(eventBytes: Uint8Array | string, frameId = newFrameId()): string {
  const text =
    typeof eventBytes === 'string'
      ? eventBytes
      : Buffer.from(eventBytes.buffer, eventBytes.byteOffset, eventBytes.byteLength).toString('utf8')
  return `${eventFrameHead(frameId)}${text}}`
}

/**
 * The frameId of a delivery EVENT frame: derived from the Event ID, so the frame is the same text
 * on every connection and every redelivery, and is built once per Event however many subscribers
 * receive it (group-feed.ts). Clients deduplicate by Event ID and sequence, never by frameId. An
 * Event ID too long for the 512-character frameId is named by its SHA-256 instead.
 */
export function deliveryFrameId(eventId: string): string {
  const direct = `${DELIVERY_FRAME_PREFIX}${eventId}`
  return direct.length <= 512
    ? direct
    : `${DELIVERY_FRAME_PREFIX}sha256:${createHash('sha256').update(eventId).digest('hex')}`
}

/**
 * A delivery EVENT frame as a complete WebSocket text message (ws-framing.ts), ready for any number
 * of sockets: eventFrame's text, with the Event's bytes copied in as they are (no string of them).
 * They end one byte before the frame does (the closing brace).
 */
export function deliveryFrame(eventId: string, event: Uint8Array | string): Buffer {
  return serverTextFrame(eventFrameHead(deliveryFrameId(eventId)), event, '}')
}

export function receiptFrameId(index: number, count: number): string {
  return `${RECEIPT_FRAME_PREFIX}${index}-of-${count}:${randomUUID()}`
}

/** `{index, count}` of a receipt EVENT frame, or null for a delivery EVENT frame. */
export function receiptPosition(frameId: string): {index: number; count: number} | null {
  if (!frameId.startsWith(RECEIPT_FRAME_PREFIX)) return null
  const m = /^(\d+)-of-(\d+):/.exec(frameId.slice(RECEIPT_FRAME_PREFIX.length))
  return m ? {index: Number(m[1]), count: Number(m[2])} : null
}

export function errorFrame(error: ProtocolError): string {
  return frame('ERROR', {error: error as unknown as JsonObject})
}

export function errorOf(code: ErrorCode, extra: Partial<ProtocolError> = {}): ProtocolError {
  const e: ProtocolError = {...protocolError(code), ...extra}
  for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k]
  return e
}
