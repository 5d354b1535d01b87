// `--dev-tls`: a throwaway certificate authority and a loopback server certificate, made with
// node:crypto alone (ECDSA P-256 keys; the X.509 DER is written here, no openssl needed).
// Development only: the CA's private key is discarded once the server certificate is signed, so
// the CA can vouch for nothing else. Clients trust it by its PEM file (WireClient `ca`).

import {createHash, generateKeyPairSync, randomBytes, sign, type KeyObject} from 'node:crypto'
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

export interface DevTls {
  /** PEM of the self-signed development CA (give it to clients). */
  ca: string
  /** PEM server certificate for localhost, 127.0.0.1 and ::1, signed by the CA. */
  cert: string
  /** PEM (PKCS #8) server private key. */
  key: string
}

// --- minimal DER ------------------------------------------------------------------------------

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length
  let len: Buffer
  if (n < 0x80) len = Buffer.from([n])
  else {
    const bytes: number[] = []
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff)
    len = Buffer.from([0x80 | bytes.length, ...bytes])
  }
  return Buffer.concat([Buffer.from([tag]), len, content])
}
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items))
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items))
const explicit = (n: number, inner: Buffer) => tlv(0xa0 + n, inner)
const octets = (b: Buffer) => tlv(0x04, b)
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]))
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0x00]))
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'))

function integer(b: Buffer): Buffer {
  let i = 0
  while (i < b.length - 1 && b[i] === 0) i++
  const v = b.subarray(i)
  return tlv(0x02, v[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v)
}

function oid(text: string): Buffer {
  const parts = text.split('.').map(Number)
  const out = [40 * parts[0]! + parts[1]!]
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f]
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f))
    out.push(...chunk)
  }
  return tlv(0x06, Buffer.from(out))
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z' // YYYYMMDDHHMMSSZ
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii'))
    : tlv(0x18, Buffer.from(iso, 'ascii'))
}

const name = (cn: string) => seq(set(seq(oid('2.5.4.3'), utf8(cn))))
const extension = (id: string, critical: boolean, value: Buffer) =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value))
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'))

function keyId(publicKey: KeyObject): Buffer {
  return createHash('sha1')
    .update(publicKey.export({type: 'spki', format: 'der'}))
    .digest()
}

function certificate(o: {
  subject: string
  issuer: string
  publicKey: KeyObject
  issuerKey: KeyObject
  issuerPublicKey: KeyObject
  extensions: Buffer[]
  days: number
}): Buffer {
  const now = Date.now()
  const serial = randomBytes(16)
  serial[0] = (serial[0]! & 0x7f) | 0x01
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    name(o.issuer),
    seq(time(new Date(now - 3600_000)), time(new Date(now + o.days * 86_400_000))),
    name(o.subject),
    o.publicKey.export({type: 'spki', format: 'der'}),
    explicit(
      3,
      seq(
        ...o.extensions,
        extension('2.5.29.14', false, octets(keyId(o.publicKey))),
        extension('2.5.29.35', false, seq(tlv(0x80, keyId(o.issuerPublicKey)))),
      ),
    ),
  )
  const signature = sign('sha256', tbs, o.issuerKey) // DER ECDSA-Sig-Value
  return seq(tbs, ECDSA_SHA256, bits(signature))
}

const pem = (label: string, der: Buffer) =>
  `-----BEGIN ${label}-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`

/** A fresh CA and a server certificate for loopback names, valid for `days` (default 30). */
export function generateDevTls(days = 30): DevTls {
  const ca = generateKeyPairSync('ec', {namedCurve: 'P-256'})
  const server = generateKeyPairSync('ec', {namedCurve: 'P-256'})
  const caCert = certificate({
    subject: 'mwp development CA',
    issuer: 'mwp development CA',
    publicKey: ca.publicKey,
    issuerKey: ca.privateKey,
    issuerPublicKey: ca.publicKey,
    days,
    extensions: [
      extension('2.5.29.19', true, seq(bool(true))),
      extension('2.5.29.15', true, bits(Buffer.from([0x86]), 1)),
    ],
  })
  const altNames = seq(
    tlv(0x82, Buffer.from('localhost', 'ascii')),
    tlv(0x87, Buffer.from([127, 0, 0, 1])),
    tlv(0x87, Buffer.from([...Array(15).fill(0), 1])),
  )
  const serverCert = certificate({
    subject: 'localhost',
    issuer: 'mwp development CA',
    publicKey: server.publicKey,
    issuerKey: ca.privateKey,
    issuerPublicKey: ca.publicKey,
    days,
    extensions: [
      extension('2.5.29.19', true, seq()),
      extension('2.5.29.15', true, bits(Buffer.from([0x80]), 7)),
      extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))),
      extension('2.5.29.17', false, altNames),
    ],
  })
  return {
    ca: pem('CERTIFICATE', caCert),
    cert: pem('CERTIFICATE', serverCert),
    key: server.privateKey.export({type: 'pkcs8', format: 'pem'}) as string,
  }
}

/** Writes ca.pem, server.pem and server.key (mode 0600) into `dir`; returns the paths. */
export function writeDevTls(
  dir: string,
  tls: DevTls = generateDevTls(),
): {caFile: string; certFile: string; keyFile: string} & DevTls {
  mkdirSync(dir, {recursive: true})
  const caFile = join(dir, 'ca.pem')
  const certFile = join(dir, 'server.pem')
  const keyFile = join(dir, 'server.key')
  writeFileSync(caFile, tls.ca)
  writeFileSync(certFile, tls.cert)
  writeFileSync(keyFile, tls.key, {mode: 0o600})
  return {caFile, certFile, keyFile, ...tls}
}
