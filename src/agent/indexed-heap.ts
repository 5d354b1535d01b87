// A binary min-heap whose entries remember their own index, so one entry can be removed or
// re-placed in O(log n) without a search: the Scheduler's per-Group ready queues take items out
// when they are gated, removed or updated, not only from the top.

export interface HeapEntry {
  /** Position in the heap, -1 when not in one; maintained by the heap only. */
  heapIndex: number
}

export class IndexedHeap<T extends HeapEntry> {
  private readonly entries: T[] = []

  /** `before(a, b)`: a comes out first. It must be a strict total order for a deterministic heap. */
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.entries.length
  }

  peek(): T | undefined {
    return this.entries[0]
  }

  /** The entries in heap (not sorted) order, for read-only scans. */
  all(): readonly T[] {
    return this.entries
  }

  push(entry: T): void {
    entry.heapIndex = this.entries.length
    this.entries.push(entry)
    this.up(entry.heapIndex)
  }

  pop(): T | undefined {
    const top = this.entries[0]
    if (top !== undefined) this.remove(top)
    return top
  }

  remove(entry: T): void {
    const i = entry.heapIndex
    if (i < 0 || this.entries[i] !== entry) return
    const last = this.entries.pop()!
    entry.heapIndex = -1
    if (last === entry) return
    this.entries[i] = last
    last.heapIndex = i
    this.down(i)
    this.up(last.heapIndex)
  }

  private up(i: number): void {
    const e = this.entries
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(e[i], e[parent])) break
      this.swap(i, parent)
      i = parent
    }
  }

  private down(i: number): void {
    const e = this.entries
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < e.length && this.before(e[l], e[m])) m = l
      if (r < e.length && this.before(e[r], e[m])) m = r
      if (m === i) return
      this.swap(i, m)
      i = m
    }
  }

  private swap(i: number, j: number): void {
    const e = this.entries
    const a = e[i]
    e[i] = e[j]
    e[j] = a
    e[i].heapIndex = i
    e[j].heapIndex = j
  }
}
