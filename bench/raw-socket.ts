// The bench's load generators speak the wire protocol on raw sockets (bench/wire-subscribers.ts,
// bench/wire-commander.ts): HELLO as the MissionOwner, then plain frames. They do no verification
// and decode as little as possible, so that on a small machine the CPU they take from the server
// under test stays small. (The client library, which verifies every Event, is tested and timed
// elsewhere: its cost is the client's, not the server's.)

import {randomBytes, randomUUID} from 'node:crypto'
import {join} from 'node:path'
import WebSocket from 'ws'
import {signEd25519} from '../src/crypto/ed25519.js'
import {readKeyFile} from '../src/crypto/keyfile.js'
import {encodeBase64url} from '../src/json/base64url.js'
import {packageRoot} from '../src/schema/catalog.js'
import {transcriptBytes} from '../src/wire/hello.js'

const owner = readKeyFile(join(packageRoot(), 'fixtures/keys', 'mission-owner.key.json'))
export const frameId = () => `urn:uuid:${randomUUID()}`

/** An authenticated connection as the MissionOwner; the caller adds its 'message' listener. */
export async function rawSession(url: string, ca: string): Promise<WebSocket> {
  // Counting sinks: no UTF-8 validation of every received byte (the server's frames are tested elsewhere).
  const ws = new WebSocket(url, {ca, minVersion: 'TLSv1.3', perMessageDeflate: false, skipUTF8Validation: true})
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  const next = () =>
    new Promise<Record<string, string>>((resolve) =>
      ws.once('message', (d) => resolve(JSON.parse(d.toString()) as Record<string, string>)),
    )
  const clientNonce = encodeBase64url(randomBytes(32))
  const id = owner.principal!.id
  const challenge = next()
  ws.send(
    JSON.stringify({
      protocolVersion: '0.1',
      frameId: frameId(),
      frameType: 'HELLO',
      phase: 'client_init',
      agentId: id,
      keyId: owner.keyId,
      clientNonce,
      supportedVersions: ['0.1'],
    }),
  )
  const ch = await challenge
  const sig = signEd25519(
    owner.seed,
    transcriptBytes({
      principalId: id,
      keyId: owner.keyId,
      clientNonce,
      serverNonce: ch.serverNonce!,
      challenge: ch.challenge!,
      selectedVersion: '0.1',
    }),
  )
  const accept = next()
  ws.send(
    JSON.stringify({
      protocolVersion: '0.1',
      frameId: frameId(),
      frameType: 'HELLO',
      phase: 'client_response',
      agentId: id,
      keyId: owner.keyId,
      clientNonce,
      serverNonce: ch.serverNonce,
      challengeSignature: encodeBase64url(sig),
    }),
  )
  if ((await accept).phase !== 'server_accept') throw new Error('bench HELLO failed')
  return ws
}
