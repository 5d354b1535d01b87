import {describe, expect, it} from 'vitest'
import fc from 'fast-check'
import {
  durationMs,
  compareInstants,
  compareTimestampText,
  formatUtcNow,
  isProfileTimestamp,
  isUppercaseUtcZ,
  parseTimestamp,
} from '../../src/json/timestamp.js'

describe('isProfileTimestamp: accepted spellings', () => {
  it.each([
    '2026-07-15T00:00:00Z',
    '2026-07-15t00:00:00z', // A5: case-insensitive T and Z
    '2026-07-15T00:00:00z',
    '2026-07-15t00:00:00Z',
    '2026-07-14T00:01:00-23:59', // A5: full numeric offset range
    '2026-07-15T23:59:01+23:59',
    '2026-07-15T08:00:00+08:00',
    '2026-07-15T00:00:00+00:00', // +00:00 is fine, only -00:00 is excluded
    '2026-07-15T00:00:00-01:30',
    '2026-07-15T00:00:00.1Z',
    '2026-07-15T00:00:00.000Z',
    '2026-07-15T00:00:00.1234560000000000002Z', // any number of fraction digits
    '0001-01-01T00:00:00Z', // lowest profile year
    '0050-06-01T12:00:00Z', // years 0-99 (the Date.UTC trap)
    '9999-12-31T23:59:59.999999999Z', // highest
    '2024-02-29T00:00:00Z', // leap year
    '2000-02-29T00:00:00Z', // divisible by 400
    '2026-01-31T00:00:00Z',
    '2026-04-30T00:00:00Z',
    '2026-12-31T23:59:59Z',
  ])('accepts %j', (text) => {
    expect(isProfileTimestamp(text)).toBe(true)
    expect(parseTimestamp(text)).not.toBeNull()
  })
})

describe('isProfileTimestamp: rejected spellings', () => {
  it.each([
    ['0000-01-01T00:00:00Z', 'A3 year 0000'],
    ['2026-06-30T23:59:60Z', 'A3 leap second'],
    ['2016-12-31T23:59:60Z', 'A3 real leap second'],
    ['2026-07-15T00:00:00-00:00', 'A3 unknown local offset'],
    ['2026-07-15T00:00:00.5-00:00', 'A3 unknown local offset with fraction'],
    ['2026-02-29T00:00:00Z', 'A4 not a leap year'],
    ['1900-02-29T00:00:00Z', 'A4 century not divisible by 400'],
    ['2026-02-30T00:00:00Z', 'A4 Feb 30'],
    ['2026-04-31T00:00:00Z', 'A4 April 31'],
    ['2026-00-10T00:00:00Z', 'A4 month 00'],
    ['2026-13-10T00:00:00Z', 'A4 month 13'],
    ['2026-01-00T00:00:00Z', 'A4 day 00'],
    ['2026-01-32T00:00:00Z', 'A4 day 32'],
    ['2026-07-15T24:00:00Z', 'A4 hour 24'],
    ['2026-07-15T00:60:00Z', 'A4 minute 60'],
    ['2026-07-15T00:00:61Z', 'A4 second 61'],
    ['2026-07-15T00:00:00+24:00', 'A4 offset hour 24'],
    ['2026-07-15T00:00:00-24:00', 'A4 offset hour -24'],
    ['2026-07-15T00:00:00+23:60', 'A4 offset minute 60'],
    ['2026-07-15T00:00:00+99:99', 'A4 offset out of range'],
    ['2026-07-15 00:00:00Z', 'space separator'],
    ['2026-07-15_00:00:00Z', 'other separator'],
    ['2026-07-15T00:00:00Z\n', 'trailing line feed'],
    ['2026-07-15T00:00:00Z\r\n', 'trailing CRLF'],
    [' 2026-07-15T00:00:00Z', 'leading space'],
    ['2026-07-15T00:00:00Z ', 'trailing space'],
    ['2026-07-15T00:00:00', 'no offset'],
    ['2026-07-15T00:00Z', 'no seconds'],
    ['2026-07-15', 'date only'],
    ['2026-07-15T00:00:00.Z', 'empty fraction'],
    ['2026-07-15T00:00:00,5Z', 'comma fraction'],
    ['2026-07-15T00:00:00+0800', 'offset without colon'],
    ['2026-07-15T00:00:00+08', 'offset hours only'],
    ['2026-07-15T00:00:00ZZ', 'double designator'],
    ['26-07-15T00:00:00Z', 'two-digit year'],
    ['+02026-07-15T00:00:00Z', 'expanded year'],
    ['10000-01-01T00:00:00Z', 'five-digit year'],
    ['2026-7-15T00:00:00Z', 'one-digit month'],
    ['2026-07-15T0:00:00Z', 'one-digit hour'],
    ['２026-07-15T00:00:00Z', 'fullwidth digit'],
    ['٢٠٢٦-07-15T00:00:00Z', 'Arabic-Indic digits'],
    ['2026-07-15T00:00:00.١Z', 'non-ASCII fraction digit'],
    ['', 'empty'],
  ])('rejects %j (%s)', (text) => {
    expect(isProfileTimestamp(text)).toBe(false)
    expect(parseTimestamp(text)).toBeNull()
  })

  it('rejects non-string input without throwing', () => {
    for (const value of [null, undefined, 0, {}, ['2026-07-15T00:00:00Z']]) {
      expect(isProfileTimestamp(value as unknown as string)).toBe(false)
    }
  })
})

describe('parseTimestamp: instants', () => {
  it('counts seconds from the Unix epoch', () => {
    expect(parseTimestamp('1970-01-01T00:00:00Z')).toEqual({seconds: 0, fraction: ''})
    expect(parseTimestamp('1969-12-31T23:59:59.5Z')).toEqual({seconds: -1, fraction: '5'})
    expect(parseTimestamp('2026-07-15T00:00:00Z')!.seconds).toBe(Date.parse('2026-07-15T00:00:00Z') / 1000)
  })

  it('applies the offset: +08:00 at 08:00 is midnight UTC', () => {
    const a = parseTimestamp('2026-07-15T08:00:00+08:00')!
    const b = parseTimestamp('2026-07-15T00:00:00Z')!
    expect(compareInstants(a, b)).toBe(0)
    expect(a).toEqual(b)
  })

  it('applies extreme offsets across a day boundary', () => {
    expect(compareTimestampText('2026-07-14T00:01:00-23:59', '2026-07-15T00:00:00Z')).toBe(0)
    expect(compareTimestampText('2026-07-15T23:59:01+23:59', '2026-07-15T00:00:01Z')).toBe(0)
    expect(compareTimestampText('0001-01-01T00:00:00+01:00', '0001-01-01T00:00:00Z')).toBe(-1)
  })

  it('handles years 0001-0099 without the Date.UTC 1900 mapping', () => {
    expect(compareTimestampText('0050-01-01T00:00:00Z', '1950-01-01T00:00:00Z')).toBe(-1)
    expect(parseTimestamp('0001-01-01T00:00:00Z')!.seconds).toBe(-62135596800)
    expect(parseTimestamp('9999-12-31T23:59:59Z')!.seconds).toBe(253402300799)
  })

  it('agrees with Date for every millisecond-precision instant in 0001-9999', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-01T00:00:00Z'),
          max: new Date('9999-12-31T23:59:59.999Z'),
          noInvalidDate: true,
        }),
        (date) => {
          const instant = parseTimestamp(date.toISOString())!
          const ms = instant.fraction.padEnd(3, '0')
          expect(instant.seconds * 1000 + Number(ms)).toBe(date.getTime())
        },
      ),
      {numRuns: 2000},
    )
  })

  it('is a total order consistent with exact BigInt arithmetic on the fraction', () => {
    const fraction = fc.stringMatching(/^[0-9]{0,25}$/)
    const stamp = (f: string) => (f === '' ? '2026-07-15T00:00:00Z' : `2026-07-15T00:00:00.${f}Z`)
    fc.assert(
      fc.property(fraction, fraction, (fa, fb) => {
        const width = Math.max(fa.length, fb.length)
        const na = BigInt(fa.padEnd(width, '0') || '0')
        const nb = BigInt(fb.padEnd(width, '0') || '0')
        const expected = na === nb ? 0 : na < nb ? -1 : 1
        expect(compareTimestampText(stamp(fa), stamp(fb))).toBe(expected)
      }),
      {numRuns: 2000},
    )
  })
})

describe('compareInstants / compareTimestampText (A6)', () => {
  it('decides order after the 6th fractional digit', () => {
    expect(compareTimestampText('2026-07-15T00:00:00.0000001Z', '2026-07-15T00:00:00Z')).toBe(1)
    expect(compareTimestampText('2026-07-15T00:00:00Z', '2026-07-15T00:00:00.0000001Z')).toBe(-1)
    expect(
      compareTimestampText('2026-07-15T00:00:00.1234560000000000001Z', '2026-07-15T00:00:00.1234560000000000002Z'),
    ).toBe(-1)
    expect(compareTimestampText('2026-07-15T00:00:00.123456001Z', '2026-07-15T00:00:00.123456Z')).toBe(1)
  })

  it('treats trailing zeros and an absent fraction as equal', () => {
    expect(compareTimestampText('2026-07-15T00:00:00Z', '2026-07-15T00:00:00.000Z')).toBe(0)
    expect(compareTimestampText('2026-07-15T00:00:00.10Z', '2026-07-15T00:00:00.1Z')).toBe(0)
    expect(compareTimestampText('2026-07-15T00:00:00.1000000000000000000Z', '2026-07-15T00:00:00.1z')).toBe(0)
    expect(parseTimestamp('2026-07-15T00:00:00.000Z')).toEqual(parseTimestamp('2026-07-15T00:00:00Z'))
  })

  it('compares fractions numerically, not by length', () => {
    expect(compareTimestampText('2026-07-15T00:00:00.12Z', '2026-07-15T00:00:00.2Z')).toBe(-1)
    expect(compareTimestampText('2026-07-15T00:00:00.9Z', '2026-07-15T00:00:00.10Z')).toBe(1)
    expect(compareTimestampText('2026-07-15T00:00:00.999999999Z', '2026-07-15T00:00:01Z')).toBe(-1)
  })

  it('orders by instant, not lexically', () => {
    // Lexically '2026-07-15T01:00:00+02:00' > '2026-07-15T00:30:00Z', but it is 23:00 the day before.
    expect(compareTimestampText('2026-07-15T01:00:00+02:00', '2026-07-15T00:30:00Z')).toBe(-1)
    expect(compareTimestampText('2026-07-15T00:00:00Z', '2026-07-15T00:00:00z')).toBe(0)
  })

  it('throws on text outside the profile', () => {
    expect(() => compareTimestampText('2026-06-30T23:59:60Z', '2026-07-15T00:00:00Z')).toThrow(RangeError)
    expect(() => compareTimestampText('2026-07-15T00:00:00Z', '2026-07-15T00:00:00-00:00')).toThrow(RangeError)
  })
})

describe('isUppercaseUtcZ (§6.4 protected time)', () => {
  it('accepts a profile timestamp ending in uppercase Z', () => {
    expect(isUppercaseUtcZ('2026-07-15T00:00:00Z')).toBe(true)
    expect(isUppercaseUtcZ('2026-07-15t00:00:00.5Z')).toBe(true)
  })

  it.each([
    '2026-07-15T00:00:00z',
    '2026-07-15T00:00:00+00:00',
    '2026-07-15T08:00:00+08:00',
    '0000-01-01T00:00:00Z',
    '2026-06-30T23:59:60Z',
    '2026-07-15T00:00:00Z\n',
  ])('rejects %j', (text) => expect(isUppercaseUtcZ(text)).toBe(false))
})

describe('formatUtcNow', () => {
  it('produces profile-valid uppercase-Z text', () => {
    const text = formatUtcNow()
    expect(isUppercaseUtcZ(text)).toBe(true)
    expect(formatUtcNow(new Date(Date.UTC(2026, 6, 15)))).toBe('2026-07-15T00:00:00.000Z')
  })

  it('refuses dates outside years 0001-9999', () => {
    expect(() => formatUtcNow(new Date('+010000-01-01T00:00:00Z'))).toThrow(RangeError)
    expect(() => formatUtcNow(new Date(Number.NaN))).toThrow(RangeError)
  })
})

describe('durationMs (common.schema.json duration)', () => {
  it('reads days, hours, minutes and fractional seconds', () => {
    expect(durationMs('PT10M')).toBe(600_000)
    expect(durationMs('P1DT1H')).toBe(90_000_000)
    expect(durationMs('PT1.5S')).toBe(1500)
    expect(durationMs('PT0S')).toBe(0)
  })
  it('refuses what the schema refuses', () => {
    for (const bad of ['P', 'PT', '10M', 'PT1.S', 'P1W', 'pt1s', 'PT-1S']) expect(durationMs(bad)).toBeNull()
  })
})
