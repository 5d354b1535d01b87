// Opening and initializing a store by URL:
//   sqlite:PATH              an SQLite file (relative to the working directory, or absolute;
//                            `sqlite:///abs/path` is accepted too). Created by initStore.
//   postgres://… | postgresql://…   a PostgreSQL database (the schema goes into its search_path).
// Adapters are imported lazily, so using one never loads the other's driver.

import {resolve} from 'node:path'
import type {SigningKey} from '../crypto/keyfile.js'
import {StoreError, normalizeConfig, redactUrl} from './records.js'
import type {Store, StoreConfig} from './types.js'

export {StoreError, type StoreErrorCode} from './records.js'
export type {AuditEntry, AuditRow, FreshnessWindow, Store, StoreConfig} from './types.js'
export {DEFAULT_FRESHNESS} from './types.js'
// The logs a Store holds, as its contract types them.
export type {AppendOutcome, GroupHead, GroupLog, LoggedEvent, Receipt, StoredEvent} from './group-log.js'
export type {OrgAppendOutcome, OrgEntry, OrgLog, OrgReceipt} from './org-log.js'
export type {PolicyLogEntry, PolicyLogReader, PolicyRecord} from './policy-log.js'
export type {CursorTable} from './cursors.js'
export type {GroupAppend} from './multi-append.js'

export type StoreTarget = {kind: 'sqlite'; path: string} | {kind: 'postgres'; url: string}

/** Parses a store URL; throws StoreError('unknown-scheme') for anything else. */
export function parseStoreUrl(url: string): StoreTarget {
  if (url.startsWith('sqlite:')) {
    let path = url.slice('sqlite:'.length)
    if (path.startsWith('//')) path = path.slice(2)
    if (path === '') throw new StoreError('unknown-scheme', 'store URL "sqlite:" names no file: use sqlite:PATH')
    return {kind: 'sqlite', path: resolve(path)}
  }
  if (/^postgres(ql)?:\/\//.test(url)) return {kind: 'postgres', url}
  throw new StoreError('unknown-scheme', `unsupported store URL "${redactUrl(url)}": use sqlite:PATH or postgres://…`)
}

export interface OpenOptions {
  /** The admission service key; only a store opened with it may append First-Admission Records. */
  admissionKey?: SigningKey
  /**
   * SQLite: write on the caller's thread instead of the store's writer thread (sqlite-writer.ts).
   * For short-lived processes (the CLI), which would otherwise wait about 50 ms for that thread to
   * start; a server keeps the writer thread, so that an fsync never stalls it. Such a process also
   * refuses, at open, a store another process keeps write-locked (sqlite.ts checkNotLocked).
   */
  inlineWrites?: boolean
}

/**
 * Opens an initialized store. Throws StoreError: 'not-initialized' (run mwp store init),
 * 'wrong-admission-key', 'unavailable', 'unknown-scheme', 'invalid-config', 'incompatible-schema'.
 */
export async function openStore(url: string, options: OpenOptions = {}): Promise<Store> {
  const target = parseStoreUrl(url)
  if (target.kind === 'sqlite') {
    const {openSqliteStore} = await import('./sqlite.js')
    return openSqliteStore(target.path, url, options.admissionKey, options.inlineWrites === true)
  }
  const {openPostgresStore} = await import('./postgres.js')
  return openPostgresStore(target.url, options.admissionKey)
}

/**
 * Creates the store's tables and records its configuration. Idempotent for the same
 * configuration; refuses ('config-mismatch') to change an initialized store's configuration.
 */
export async function initStore(url: string, config: StoreConfig): Promise<void> {
  const target = parseStoreUrl(url)
  const normalized = normalizeConfig(config)
  if (target.kind === 'sqlite') {
    const {initSqliteStore} = await import('./sqlite.js')
    return initSqliteStore(target.path, normalized)
  }
  const {initPostgresStore} = await import('./postgres.js')
  return initPostgresStore(target.url, normalized)
}
