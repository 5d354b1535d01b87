// Opening the configured store from a command: failures are environment errors (exit 3).

import {KeyFileError, type SigningKey, readKeyFile} from '../crypto/keyfile.js'
import {openStore} from '../store/index.js'
import type {Store} from '../store/types.js'
import {environment, usage} from './base.js'

export function readKey(path: string, flag: string): SigningKey {
  try {
    return readKeyFile(path)
  } catch (e) {
    if (e instanceof KeyFileError) throw e.code === 'io-error' ? environment(e.message) : usage(`${flag} ${path}: ${e.message}`)
    throw e
  }
}

export async function openConfiguredStore(url: string | undefined, admissionKeyPath?: string): Promise<Store> {
  if (!url) throw usage('no store: give --store URL (or set MWP_STORE)')
  const admissionKey = admissionKeyPath ? readKey(admissionKeyPath, '--admission-key') : undefined
  try {
    return await openStore(url, {admissionKey})
  } catch (e) {
    throw environment(`cannot open store ${url}: ${(e as Error).message}`)
  }
}
