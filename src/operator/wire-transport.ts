// The wire transport of the operator commands: engineer E's WebSocket client (src/wire/client.ts).
// Loaded lazily so the local transport (and every command using it) works without a server.

import type {SigningKey} from '../crypto/keyfile.js'
import type {Transport} from './transport.js'

export interface WireTarget {
  url: string
  key: SigningKey
  /** CA certificate file trusted for the server's TLS certificate. */
  ca?: string
  /** Registry file of the Organization: delivered Events are verified against it. */
  registry?: string
}

// A non-literal specifier keeps the build independent of the wire module while it is written.
const WIRE_CLIENT = '../wire/client.js'

export async function openWireTransport(target: WireTarget): Promise<Transport> {
  let mod: Record<string, unknown>
  try {
    mod = (await import(WIRE_CLIENT)) as Record<string, unknown>
  } catch {
    throw new Error(`this build has no wire client: use --store URL with --config to reach the authority locally (wanted ${target.url})`)
  }
  void mod
  throw new Error('the wire transport is not connected yet')
}
