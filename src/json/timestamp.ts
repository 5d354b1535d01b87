// The MissionWeaveProtocol timestamp profile (spec §2, §6.4).
//
// An RFC 3339 `date-time` narrowed by the protocol: year 0001-9999 with a valid Gregorian date,
// no leap second (:60), no unknown-local-offset `-00:00`, and a fractional second of any length
// whose every digit is significant. `T`/`Z` stay case-insensitive and the numeric offset keeps the
// full RFC 3339 range (±23:59).
//
// Instants are computed with integer arithmetic, never through `Date`: `Date.UTC` maps years
// 0-99 to 1900-1999 and a double cannot carry more than ~3 fractional digits at epoch scale.
// Timestamp text is never rewritten here; callers keep the original string for hashing.

/**
 * An exact point in time. `seconds` is the integer count of UTC seconds since 1970-01-01T00:00:00Z
 * (offset already applied; always a safe integer for years 0001-9999). `fraction` holds the
 * fractional-second digits with trailing zeros stripped, so equal instants have equal fields.
 */
export interface Instant {
  readonly seconds: number
  readonly fraction: string
}

// Anchored at both ends with no `m` flag, so a trailing line feed can never match. Only ASCII
// digits ([0-9], not \d with a `u`/`v` flag ambiguity). Linear: no nested quantifiers.
// Groups: 1 year, 2 month, 3 day, 4 hour, 5 minute, 6 second, 7 fraction, 8 offset sign,
// 9 offset hour, 10 offset minute.
const PROFILE = new RegExp(
  '^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\\.([0-9]+))?' +
    '(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))$',
)

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!
}

/** Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const mp = (month + 9) % 12 // March = 0
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/** Parses profile-valid timestamp text into an exact instant, or returns null. */
export function parseTimestamp(text: string): Instant | null {
  if (typeof text !== 'string') return null
  const m = PROFILE.exec(text)
  if (m === null) return null
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  const hour = Number(m[4])
  const minute = Number(m[5])
  const second = Number(m[6])
  if (year < 1) return null // year 0000 is outside the profile
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null
  if (hour > 23 || minute > 59 || second > 59) return null // no leap second in v0.1
  let offsetSeconds = 0
  if (m[8] !== undefined) {
    const offsetHour = Number(m[9])
    const offsetMinute = Number(m[10])
    if (offsetHour > 23 || offsetMinute > 59) return null
    // `-00:00` means "UTC, local offset unknown" in RFC 3339 and is excluded by the profile.
    if (m[8] === '-' && offsetHour === 0 && offsetMinute === 0) return null
    offsetSeconds = (m[8] === '-' ? -1 : 1) * (offsetHour * 3600 + offsetMinute * 60)
  }
  const local = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second
  const fraction = (m[7] ?? '').replace(/0+$/, '')
  return {seconds: local - offsetSeconds, fraction}
}

/** True when the text satisfies the protocol timestamp profile (used as the `date-time` format). */
export function isProfileTimestamp(text: string): boolean {
  return parseTimestamp(text) !== null
}

/**
 * Exact instant order. Fractions carry no trailing zeros, so comparing the digit strings
 * lexicographically is the same as comparing them numerically ("12" < "2" as 0.12 < 0.2), with no
 * precision limit.
 */
export function compareInstants(a: Instant, b: Instant): -1 | 0 | 1 {
  if (a.seconds !== b.seconds) return a.seconds < b.seconds ? -1 : 1
  if (a.fraction === b.fraction) return 0
  return a.fraction < b.fraction ? -1 : 1
}

/** Compares two timestamp texts as instants; throws a RangeError if either is not profile-valid. */
export function compareTimestampText(a: string, b: string): -1 | 0 | 1 {
  const left = parseTimestamp(a)
  const right = parseTimestamp(b)
  if (left === null) throw new RangeError(`not a protocol timestamp: ${JSON.stringify(a)}`)
  if (right === null) throw new RangeError(`not a protocol timestamp: ${JSON.stringify(b)}`)
  return compareInstants(left, right)
}

/**
 * The stricter spelling §6.4 requires of the protected signed time and `signature.createdAt`:
 * profile-valid and ending in an uppercase `Z` (not `z`, not a numeric offset, not `+00:00`).
 */
export function isUppercaseUtcZ(text: string): boolean {
  return typeof text === 'string' && text.endsWith('Z') && isProfileTimestamp(text)
}

/**
 * Current (or given) time as `YYYY-MM-DDThh:mm:ss.sssZ`, which is profile-valid and satisfies
 * `isUppercaseUtcZ` for years 0001-9999.
 */
export function formatUtcNow(date: Date = new Date()): string {
  const text = date.toISOString() // throws on an invalid Date
  // Years outside 0001-9999 get an expanded `+YYYYYY` spelling that the profile rejects.
  if (!isUppercaseUtcZ(text)) throw new RangeError(`date outside the timestamp profile: ${text}`)
  return text
}

/** The instant `ms` as a whole-second protocol timestamp (`2027-01-31T00:00:00Z`): deadlines and lease ends people read. */
export const formatUtcSeconds = (ms: number): string => formatUtcNow(new Date(ms)).replace(/\.\d{3}Z$/, 'Z')

const DURATION = /^P(?!$)(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/

/** Milliseconds of a common.schema.json `duration` (`P1D`, `PT10M`, `PT1.5S`), or null when it is not one. */
export function durationMs(text: string): number | null {
  const m = DURATION.exec(text)
  if (m === null) return null
  const [d, h, min, s] = m.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number]
  return Math.round((((d * 24 + h) * 60 + min) * 60 + s) * 1000)
}
