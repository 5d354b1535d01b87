// Issue #15: a store outage during first admission is the Authority's fault, not the sender's.
// The Admission Log lookup fails for real — it is served by a second SQLite store of the same
// Organization whose database connection has been closed, so its query throws and lookup()
// answers `unavailable` — while the rest of the store (the audit log included) works. The Command
// is answered INTERNAL_ERROR, retryable — never AUTH_INVALID_SIGNATURE, which §19 forbids
// retrying unchanged — and the unchanged bytes are accepted once the lookup works again.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {Store} from '../../src/store/index.js'
import {authorityOn, createCommand, newGroup, sqliteStore, storeWith} from '../support/authority-helpers.js'

describe('a store outage during first admission (issue #15)', () => {
  let store: Store
  let cleanup: () => Promise<void>
  let down: Store
  beforeAll(async () => {
    ;({store, cleanup} = await sqliteStore())
    const second = await sqliteStore()
    down = second.store
    await second.cleanup() // closes it: every query of `down` now fails
  })
  afterAll(async () => cleanup())

  it('answers INTERNAL_ERROR (retryable) while the Admission Log cannot be read, and accepts the same bytes after', async () => {
    const bytes = createCommand(newGroup('outage'))
    const outage: Authority = authorityOn(storeWith(store, {lookup: down.lookup.bind(down)}))
    const during = await submit(outage, bytes)
    expect('error' in during && during.error).toMatchObject({code: 'INTERNAL_ERROR', retryable: true})
    // The protected diagnostic keeps what happened: the admission stage, the log's failure.
    const audit = await store.listAudit()
    expect(audit.at(-1)).toMatchObject({stage: 'admission', reason: 'log-unavailable'})
    expect(audit.at(-1)?.detail).toMatch(/not open/)

    const after = await submit(authorityOn(store), bytes)
    expect('receipt' in after && after.receipt.firstSequence).toBe(1)
  })
})
