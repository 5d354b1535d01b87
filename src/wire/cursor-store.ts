// Client-side durable Cursors (spec §16): the highest contiguous Group sequence the client has
// processed, kept across reconnects (memory) or across restarts (file). The wire client resumes
// every subscription from here and never stores a Cursor over a gap.

import {mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'

export interface CursorStore {
  load(groupId: string): number | null | Promise<number | null>
  save(groupId: string, sequence: number): void | Promise<void>
}

export class MemoryCursorStore implements CursorStore {
  readonly #cursors = new Map<string, number>()
  load(groupId: string): number | null {
    return this.#cursors.get(groupId) ?? null
  }
  save(groupId: string, sequence: number): void {
    if (sequence > (this.#cursors.get(groupId) ?? 0)) this.#cursors.set(groupId, sequence)
  }
}

/** One JSON file `{groupId: sequence}`, replaced atomically (write + rename) on every save. */
export class FileCursorStore implements CursorStore {
  readonly #cursors: Record<string, number>
  constructor(readonly path: string) {
    let loaded: Record<string, number> = {}
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
        loaded = parsed as Record<string, number>
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
    }
    this.#cursors = Object.assign(Object.create(null) as Record<string, number>, loaded)
  }
  load(groupId: string): number | null {
    const v = this.#cursors[groupId]
    return Number.isSafeInteger(v) ? v! : null
  }
  save(groupId: string, sequence: number): void {
    if (sequence <= (this.load(groupId) ?? 0)) return
    this.#cursors[groupId] = sequence
    mkdirSync(dirname(this.path), {recursive: true})
    const tmp = `${this.path}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(this.#cursors) + '\n')
    renameSync(tmp, this.path)
  }
}
