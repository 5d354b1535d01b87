// Reading documents from file arguments and stdin without holding more than one document (or one
// read chunk) in memory: `mwp verify` reads a document of any size, or an NDJSON stream of any
// length, in memory bounded by `cap`.

import {createReadStream} from 'node:fs'
import type {Readable} from 'node:stream'
import {readFailure} from './base.js'

/** A file argument's bytes as a stream; `-` is stdin. */
export function inputStream(path: string): Readable {
  return path === '-' ? process.stdin : createReadStream(path, {highWaterMark: 1 << 16})
}

/**
 * The first `cap` bytes of `path`, plus one byte if there are more: enough for the verifier to
 * refuse an oversized document by its length (stage 1) without the rest ever being held. A file
 * is not read further; stdin is read to its end and the rest dropped, so a writer into the pipe
 * is not cut off.
 */
export async function readCapped(path: string, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let kept = 0
  try {
    for await (const chunk of inputStream(path) as AsyncIterable<Buffer>) {
      if (kept > cap) continue
      const part = kept + chunk.length > cap + 1 ? chunk.subarray(0, cap + 1 - kept) : chunk
      chunks.push(part)
      kept += part.length
      if (kept > cap && path !== '-') break
    }
  } catch (e) {
    throw readFailure(path, e)
  }
  return Buffer.concat(chunks, kept)
}

/** One non-blank line of an NDJSON input: its 1-based number and bytes (at most cap + 1 of them). */
export interface Line {
  number: number
  bytes: Buffer
}

const isBlankByte = (b: number) => b === 0x20 || b === 0x09 || b === 0x0d

/**
 * Splits a byte stream into lines at LF, chunk by chunk: a line within one chunk is a view of it,
 * a line across chunks is joined once complete, and of a line longer than `cap` only cap + 1
 * bytes are kept. Lines holding only spaces, tabs and CRs are counted but not returned.
 */
export class LineSplitter {
  #number = 0
  /** Parts of the line not yet ended by LF. */
  #parts: Buffer[] = []
  #kept = 0
  #blank = true

  constructor(private readonly cap: number) {}

  /** The lines that `chunk` completes. */
  push(chunk: Buffer): Line[] {
    const lines: Line[] = []
    let start = 0
    for (;;) {
      const end = chunk.indexOf(0x0a, start)
      if (end === -1) {
        if (start < chunk.length) this.#append(chunk.subarray(start))
        return lines
      }
      this.#append(chunk.subarray(start, end))
      const line = this.#take()
      if (line !== null) lines.push(line)
      start = end + 1
    }
  }

  /** The last line, when the input does not end with LF. */
  end(): Line | null {
    return this.#parts.length > 0 ? this.#take() : null
  }

  #append(part: Buffer): void {
    if (this.#blank && !part.every(isBlankByte)) this.#blank = false
    if (this.#kept > this.cap) return
    const room = this.cap + 1 - this.#kept
    const kept = part.length > room ? part.subarray(0, room) : part
    this.#parts.push(kept)
    this.#kept += kept.length
  }

  #take(): Line | null {
    this.#number++
    const parts = this.#parts
    const blank = this.#blank
    this.#parts = []
    this.#kept = 0
    this.#blank = true
    if (blank) return null
    return {number: this.#number, bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts)}
  }
}
