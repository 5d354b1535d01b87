// The Admission Log's row signatures (spec §6.4 "Admission Log") are checked with strictVerify:
// a row whose admission service signature is malleated or has a non-strict R is integrity-failed,
// and no store takes a configured service key that fails the strict key checks.

import {describe, expect, it} from 'vitest'
import {generateSigningKey} from '../../src/crypto/keyfile.js'
import {decodeBase64url, encodeBase64url} from '../../src/json/base64url.js'
import {AdmissionAuthority, type AdmissionRow, StoreError, rowMessage} from '../../src/store/records.js'
import type {StoreConfig} from '../../src/store/types.js'
import {FORGED_SIG, badPublicKeys, badSignatures, malleateS, nodeVerify} from '../support/crypto-vectors.js'

const ORG = 'urn:mwp:test:org:rows'
const service = generateSigningKey({
  keyId: 'urn:mwp:test:key:admission-1',
  principal: {type: 'service', id: 'urn:mwp:test:service:admission'},
})
const config = (publicKey = service.publicKeyB64): StoreConfig => ({
  organizationId: ORG,
  admissionService: {principal: {type: 'service', id: service.principal!.id}, keyId: service.keyId, publicKey},
  freshness: {maxAgeSeconds: 300, maxFutureSkewSeconds: 60},
})

/** A row the admission service signed, through the same prepare() the adapters insert from. */
function signedRow(authority: AdmissionAuthority): AdmissionRow {
  const principal = {type: 'agent' as const, id: 'urn:mwp:test:agent:rows'}
  const fields = {
    organizationId: ORG,
    signingHash: 'sha256:' + 'ab'.repeat(32),
    admissionRecordId: 'urn:uuid:40000000-0000-4000-8000-000000000001',
    documentKind: 'command',
    keyId: 'urn:mwp:test:key:rows-1',
    principal,
  }
  const record = {
    protocolVersion: '0.1',
    ...fields,
    trustedAcceptedAt: '2026-08-01T12:00:00Z',
    acceptedBy: authority.service,
  }
  const prepared = authority.prepare({...fields, bytes: Buffer.from(JSON.stringify(record, null, 2) + '\n')})
  if (!('row' in prepared)) throw new Error(`prepare refused: ${JSON.stringify(prepared.refused)}`)
  return prepared.row
}

const withSignature = (row: AdmissionRow, sig: Uint8Array): AdmissionRow => ({
  ...row,
  service_signature: encodeBase64url(sig),
})

describe('Admission Log row signatures', () => {
  const authority = new AdmissionAuthority(config(), service)
  const row = signedRow(authority)
  const sig = decodeBase64url(row.service_signature)!

  it('an honest row is found, under a store opened with or without the service key', () => {
    expect(authority.authenticate(row).status).toBe('found')
    expect(new AdmissionAuthority(config(), undefined).authenticate(row).status).toBe('found')
  })

  it('S + L (the same signature, malleated) is integrity-failed', () => {
    expect(authority.authenticate(withSignature(row, malleateS(sig)))).toEqual({
      status: 'integrity-failed',
      detail: 'the row does not carry a valid admission service signature',
    })
  })

  it('each upstream stage-3 signature vector, and the R = I, S = 0 forgery, is integrity-failed', () => {
    for (const {sig: bad} of [...badSignatures(), {sig: FORGED_SIG}]) {
      expect(authority.authenticate(withSignature(row, bad)).status).toBe('integrity-failed')
    }
  })

  it('a configured admission service key failing a strict key check is refused, even where a bare verify takes the forgery', () => {
    const identity = badPublicKeys().find((k) => k.reason === 'identity')!.raw
    expect(nodeVerify(identity, rowMessage(row), FORGED_SIG)).toBe(true)
    for (const {reason, raw} of badPublicKeys()) {
      expect(() => new AdmissionAuthority(config(encodeBase64url(raw)), undefined)).toThrow(StoreError)
      expect(() => new AdmissionAuthority(config(encodeBase64url(raw)), undefined)).toThrow(`(${reason})`)
    }
  })
})
