// The one signer (spec §6.4): fills the top-level signature envelope of a Signed Document.
//
// The signature covers the JCS form of the document without its top-level `signature`; the
// envelope's `createdAt` is the protected signed time, byte for byte. Before returning, the
// signed document is run through the same six-stage verifier's schema stage so that nothing we
// sign can later fail schema validation.

import {signEd25519} from '../crypto/ed25519.js'
import {MwpError, type SignErrorCode} from '../errors.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {encodeBase64url} from '../json/base64url.js'
import {canonicalBytes} from '../json/jcs.js'
import type {JsonObject} from '../json/parse.js'
import {isUppercaseUtcZ} from '../json/timestamp.js'
import {schemaCatalog} from '../schema/catalog.js'
import {createHash} from 'node:crypto'
import {type DocumentKind, PROFILES, expectedSigner} from './profiles.js'

export class SignError extends MwpError<SignErrorCode> {}

export interface SignOptions {
  /** Set the protected signed time (and so `signature.createdAt`) to this UTC-Z text first. */
  now?: string
}

export interface Signed {
  document: JsonObject
  signingBytes: Buffer
  signingHash: string
}

export function sign(kind: DocumentKind, unsigned: unknown, key: SigningKey, options: SignOptions = {}): Signed {
  if (unsigned === null || typeof unsigned !== 'object' || Array.isArray(unsigned)) {
    throw new SignError('not-an-object', 'a Signed Document must be a JSON object')
  }
  const profile = PROFILES[kind]
  // Drop any previous envelope: re-signing replaces it.
  const {signature: _previous, ...content} = unsigned as JsonObject
  if (options.now !== undefined) content[profile.timeField] = options.now
  const time = content[profile.timeField]
  if (typeof time !== 'string' || !isUppercaseUtcZ(time)) {
    throw new SignError(
      'protected-time-not-utc-z',
      `${profile.timeField} must be an RFC 3339 UTC time ending in uppercase Z (use --now to set it)`,
    )
  }

  const signingBytes = canonicalBytes(content)
  const document: JsonObject = {
    ...content,
    signature: {
      algorithm: 'Ed25519',
      keyId: key.keyId,
      createdAt: time,
      value: encodeBase64url(signEd25519(key.seed, signingBytes)),
    },
  }

  const checked = schemaCatalog().validate(profile.schema, document)
  if (!checked.valid) {
    const detail = checked.errors.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')
    throw new SignError('schema-invalid', `the signed ${kind} does not match ${profile.schema}: ${detail}`)
  }
  if (key.principal) {
    const signer = expectedSigner(profile, document)
    if (key.principal.type !== signer.type || (signer.id !== null && key.principal.id !== signer.id)) {
      const wanted = signer.id === null ? 'a service Principal' : `${signer.type} ${signer.id}`
      throw new SignError(
        'signer-mismatch',
        `this ${kind} must be signed by ${wanted}, but the key belongs to ${key.principal.type} ${key.principal.id}`,
      )
    }
  }
  return {document, signingBytes, signingHash: 'sha256:' + createHash('sha256').update(signingBytes).digest('hex')}
}
