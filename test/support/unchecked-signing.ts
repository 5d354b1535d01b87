// Correctly Ed25519-signed documents that the project signer would refuse to produce because they
// break the schema: the ingress and the verifier must find that out themselves (stage 2,
// SCHEMA_VALIDATION_FAILED).

import {signEd25519} from '../../src/crypto/ed25519.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {encodeBase64url} from '../../src/json/base64url.js'
import {canonicalBytes} from '../../src/json/jcs.js'
import type {JsonObject} from '../../src/json/parse.js'
import {uuid} from './authority-helpers.js'

/** `unsigned` (any previous signature dropped) signed by `key`, the signature dated `unsigned[timeField]`. */
export function signedAnyway(unsigned: JsonObject, key: SigningKey, timeField: string): Buffer {
  const {signature: _previous, ...content} = unsigned
  const value = encodeBase64url(signEd25519(key.seed, canonicalBytes(content)))
  return Buffer.from(
    JSON.stringify({
      ...content,
      signature: {algorithm: 'Ed25519', keyId: key.keyId, createdAt: content[timeField], value},
    }),
    'utf8',
  )
}

/** command() without the signer's schema check: fresh IDs, issued now, empty payload unless `fields` has one. */
export const rawCommand = (signer: SigningKey, fields: Record<string, unknown>) =>
  signedAnyway(
    {
      protocolVersion: '0.1',
      actionId: uuid(1),
      actor: signer.principal,
      correlationId: uuid(2),
      issuedAt: new Date().toISOString(),
      payload: {},
      ...fields,
    } as unknown as JsonObject,
    signer,
    'issuedAt',
  )
