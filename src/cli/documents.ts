// Reading local JSON input for commands that work on one document.

import {JcsError} from '../json/jcs.js'
import {type JsonValue, JsonParseError, parseJsonBytes} from '../json/parse.js'
import type {Outcome} from './base.js'

/** Strictly parses input bytes, or returns the PROTOCOL_VIOLATION outcome with the reason. */
export function parseOrReject(bytes: Uint8Array): {value: JsonValue} | Outcome {
  try {
    return {value: parseJsonBytes(bytes)}
  } catch (e) {
    if (e instanceof JsonParseError) return {status: 'rejected', code: 'PROTOCOL_VIOLATION', note: e.message}
    throw e
  }
}

/** Maps a JCS data-model failure (1e400, unpaired surrogate) to its PROTOCOL_VIOLATION outcome. */
export function jcsRejection(e: unknown): Outcome {
  if (e instanceof JcsError) return {status: 'rejected', code: 'PROTOCOL_VIOLATION', note: e.message}
  throw e
}
