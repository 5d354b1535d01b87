// Reading a Group's stored Events back, verified against the fixture Registry.

import type {Store} from '../../src/store/index.js'
import {verify} from '../../src/signing/verify.js'
import {registry} from './authority-helpers.js'

/** The kind, verified payload and occurredAt of Group `g`'s newest Event (proves what a Command emitted). */
export async function newestEvent(store: Store, g: string) {
  const [e] = (await store.read(g, (await store.head(g))!.sequence - 1, 1)).events
  const v = verify('event', e!.bytes, registry)
  if (!v.ok) throw new Error(`stored Event ${e!.sequence} does not verify`)
  return {
    kind: e!.kind,
    payload: v.document.payload as Record<string, unknown>,
    occurredAt: v.document.occurredAt as string,
  }
}
