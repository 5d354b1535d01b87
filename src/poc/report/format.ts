// Text formatting both renderers share: durations, measured values, and the time of a trace string.

/** Milliseconds since the epoch of an RFC 3339 time, or undefined when the run recorded something unparsable. */
export function parseTime(at: string): number | undefined {
  const ms = Date.parse(at)
  return Number.isFinite(ms) ? ms : undefined
}

/** A duration an operator reads at a glance: "850 ms", "12.4 s", "3 m 05 s", "1 h 02 m". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?'
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = ms / 1000
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`
  const total = Math.round(s)
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const sec = total % 60
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} m`
  return `${m} m ${String(sec).padStart(2, '0')} s`
}

/** A tick label on a time axis: whole seconds or minutes when the step allows, else tenths. */
export function formatOffset(ms: number, stepMs: number): string {
  if (stepMs >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`
  if (stepMs >= 1000) {
    const s = Math.round(ms / 1000)
    if (s < 60) return `${s}s`
    return s % 60 === 0 ? `${s / 60}m` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  }
  return `${(ms / 1000).toFixed(stepMs >= 100 ? 1 : 2)}s`
}

/** A measured number without float noise: integers as they are, others to 3 decimals, trailing zeros dropped. */
export function formatNumber(n: number): string {
  if (Number.isInteger(n)) return String(n)
  if (!Number.isFinite(n)) return String(n)
  return String(Number(n.toFixed(3)))
}

/** A check's measured values as `k=v k=v`, in the order the check recorded them (its own reading order). */
export function formatMeasured(measured: Record<string, number | string | boolean>): string {
  return Object.entries(measured)
    .map(([k, v]) => {
      if (typeof v === 'number') return `${k}=${formatNumber(v)}`
      if (typeof v === 'boolean') return `${k}=${v}`
      // Quote strings that would read as several pairs.
      return `${k}=${/^[^\s=]*$/.test(v) && v !== '' ? v : JSON.stringify(v)}`
    })
    .join(' ')
}

/** Singular or plural: "1 round", "2 rounds". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

/** Time since the run started, as a table reads it: "+0.5s", "+42.0s", "+2m05s". */
export function formatSince(ms: number): string {
  if (!Number.isFinite(ms)) return '?'
  const sign = ms < 0 ? '−' : '+'
  const a = Math.abs(ms)
  if (a < 60_000) return `${sign}${(a / 1000).toFixed(1)}s`
  const s = Math.round(a / 1000)
  return `${sign}${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
}
