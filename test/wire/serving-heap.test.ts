// src/wire/serving-heap.ts: the V8 heap setting `mwp authority serve` applies (its effect on
// latency is measured by bench/wire.ts, not here), and a process started with its own keeps it.

import {describe, expect, it} from 'vitest'
import {SERVING_HEAP_GROWING_PERCENT, tuneHeapForServing} from '../../src/wire/serving-heap.js'

describe('tuneHeapForServing', () => {
  it('sets V8 heap growing factor 4 for a process started without one', () => {
    expect(SERVING_HEAP_GROWING_PERCENT).toBe(300)
    expect(tuneHeapForServing(['--enable-source-maps'])).toBe('--heap-growing-percent=300')
  })

  it("keeps the operator's own setting, in either spelling", () => {
    expect(tuneHeapForServing(['--heap-growing-percent=50'])).toBe('--heap-growing-percent=50')
    expect(tuneHeapForServing(['--heap_growing_percent=120', '--enable-source-maps'])).toBe(
      '--heap_growing_percent=120',
    )
    expect(tuneHeapForServing(['--heap-growing-percent', '80'])).toBe('--heap-growing-percent')
    // Not a prefix match on other flags.
    expect(tuneHeapForServing(['--heap-growing-percentile=1'])).toBe('--heap-growing-percent=300')
  })
})
