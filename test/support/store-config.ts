// The example Organization the store suites initialize raw stores for: an admission service whose
// key is generated when a test file loads this module (vitest isolates files), no fixture keys.

import {generateSigningKey} from '../../src/crypto/keyfile.js'
import {DEFAULT_FRESHNESS, type StoreConfig} from '../../src/store/index.js'

export const ORG = 'https://org.example/'
export const SERVICE = {type: 'service' as const, id: 'https://org.example/services/admission'}
export const serviceKey = generateSigningKey({keyId: 'https://org.example/keys/admission-1', principal: SERVICE})

/** What initStore gets: ORG, its admission service SERVICE under serviceKey, the default freshness window. */
export const storeConfig: StoreConfig = {
  organizationId: ORG,
  admissionService: {principal: SERVICE, keyId: serviceKey.keyId, publicKey: serviceKey.publicKeyB64},
  freshness: DEFAULT_FRESHNESS,
}
