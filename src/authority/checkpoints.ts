// Signed folded-state checkpoints (issue #15): what lets a cold start fold only the Events after
// the newest checkpoint instead of the whole Group log. The Authority signs each checkpoint with
// its own service key over a binding of the Group, the sequence, the hash of the exact stored
// Event bytes at that sequence, and the state's canonical hash; on a cold start it trusts a
// checkpoint only when that signature verifies with its own key, the state bytes hash to the
// bound state hash, and the stored Event at the sequence still has the bound hash. Anything else
// is reported and ignored (an older checkpoint or a full fold is used instead).
//
// The state a checkpoint holds was itself produced from verified Events (the live path or a
// verified fold), so the Events before the checkpoint need not be re-verified.

import {contentHash} from '../crypto/hash.js'
import {signEd25519, strictVerify} from '../crypto/ed25519.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {decodeBase64url, encodeBase64url} from '../json/base64url.js'
import {canonicalBytes} from '../json/jcs.js'
import type {StoredCheckpoint} from '../store/checkpoints.js'
import type {GroupState} from './model/state.js'

/** Write a checkpoint once this many Events were applied since the Group's last one. */
export const CHECKPOINT_EVERY = 256

/**
 * The state model a checkpoint's state was folded under. Raise it whenever GroupState's shape or
 * what apply() computes changes (version 2: Messages left the state for the store's Message
 * table): the signature covers it, so a checkpoint an older build wrote does not verify under a
 * newer one and the Group is folded from its Events instead of starting from a state of another shape.
 */
export const STATE_MODEL = 2

/** What the signature covers: a fixed, domain-separated JCS object (never a protocol document). */
function binding(c: Omit<StoredCheckpoint, 'state' | 'signature'>, model: number): Buffer {
  return canonicalBytes({
    type: 'mwp-group-state-checkpoint/1',
    model,
    groupId: c.groupId,
    sequence: c.sequence,
    eventHash: c.eventHash,
    stateHash: c.stateHash,
    keyId: c.keyId,
  })
}

/** A checkpoint of `state` (folded under `model`), whose last Event's exact stored bytes are `eventBytes`. */
export function makeCheckpoint(
  key: SigningKey,
  state: GroupState,
  eventBytes: Uint8Array,
  model = STATE_MODEL,
): StoredCheckpoint {
  const bytes = canonicalBytes(state)
  const unsigned = {
    groupId: state.groupId,
    sequence: state.sequence,
    eventHash: contentHash(eventBytes),
    // = groupStateHash(state) (model/state-hash.ts), without canonicalizing the state twice
    stateHash: contentHash(bytes),
    keyId: key.keyId,
  }
  return {...unsigned, state: bytes, signature: encodeBase64url(signEd25519(key.seed, binding(unsigned, model)))}
}

/**
 * The state a checkpoint holds, or why it is not to be trusted. `storedEvent` reads the stored
 * bytes of the Group's Event at the checkpoint's sequence (null: no such Event); it is called only
 * once the signature and the state hash hold.
 */
export async function checkedCheckpoint(
  key: SigningKey,
  c: StoredCheckpoint,
  groupId: string,
  storedEvent: (sequence: number) => Promise<Uint8Array | null>,
): Promise<GroupState | string> {
  if (c.groupId !== groupId) return `checkpoint of ${c.groupId} read for ${groupId}`
  if (c.keyId !== key.keyId) return `signed by key ${c.keyId}, not this Authority's ${key.keyId}`
  const signature = decodeBase64url(c.signature)
  if (signature === null || !strictVerify(key.publicKey, binding(c, STATE_MODEL), signature).ok)
    return `signature does not verify with the Authority key for state model ${STATE_MODEL}`
  if (contentHash(c.state) !== c.stateHash) return 'state bytes do not match the signed state hash'
  const eventBytes = await storedEvent(c.sequence)
  if (eventBytes === null) return `no stored Event at sequence ${c.sequence}`
  if (contentHash(eventBytes) !== c.eventHash) return `the stored Event at sequence ${c.sequence} is not the bound one`
  let state: GroupState
  try {
    state = JSON.parse(Buffer.from(c.state).toString('utf8')) as GroupState
  } catch {
    return 'state bytes are not JSON'
  }
  if (state.groupId !== groupId || state.sequence !== c.sequence)
    return `state declares ${state.groupId}#${state.sequence}, not ${groupId}#${c.sequence}`
  return state
}
