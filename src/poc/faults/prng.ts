// Seeded randomness: the same seed gives the same draws. The fault proxies beside it draw their
// duplicates and shuffles from it (arrival timing still varies from run to run), the property,
// fuzz and mutation suites their inputs. It lives in src/ because src/ may not import from test/.

/** mulberry32: a tiny deterministic PRNG; each call returns the next float in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
