// RFC 6455 §5.2 framing of one server→client text message, for messages written to many sockets:
// the frame bytes (header + payload) are built once and written as they are, instead of the ws
// library framing the same payload again for every subscriber. A server never masks (§5.1), the
// gateway never fragments or compresses (perMessageDeflate is off), so the frame is FIN + opcode 1,
// the payload length, and the payload.

/**
 * The complete WebSocket frame of one unfragmented, unmasked text message whose payload is
 * `parts` joined (strings as UTF-8), built in one allocation.
 */
export function serverTextFrame(...parts: (string | Uint8Array)[]): Buffer {
  let n = 0
  for (const p of parts) n += typeof p === 'string' ? Buffer.byteLength(p) : p.byteLength
  const headerLength = n < 126 ? 2 : n < 65_536 ? 4 : 10
  const out = Buffer.allocUnsafe(headerLength + n)
  out[0] = 0x81 // FIN, opcode 1 (text)
  if (n < 126) {
    out[1] = n
  } else if (n < 65_536) {
    out[1] = 126
    out.writeUInt16BE(n, 2)
  } else {
    out[1] = 127
    out.writeBigUInt64BE(BigInt(n), 2)
  }
  let at = headerLength
  for (const p of parts) {
    if (typeof p === 'string') at += out.write(p, at)
    else {
      out.set(p, at)
      at += p.byteLength
    }
  }
  return out
}
