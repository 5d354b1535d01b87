// Opening the configured store from a command: failures are environment errors (exit 3).

import {KeyFileError, type SigningKey, readKeyFile} from '../crypto/keyfile.js'
import {openStore} from '../store/index.js'
import type {Store} from '../store/types.js'
import {environment, usage} from './base.js'

export function readKey(path: string, flag: string): SigningKey {
  try {
    return readKeyFile(path)
  } catch (e) {
    if (e instanceof KeyFileError)
      throw e.code === 'io-error' ? environment(e.message) : usage(`${flag} ${path}: ${e.message}`)
    throw e
  }
}

async function open(url: string, admissionKey?: SigningKey): Promise<Store> {
  try {
    // A CLI process is short-lived: it writes on its own thread (OpenOptions.inlineWrites).
    return await openStore(url, {admissionKey, inlineWrites: true})
  } catch (e) {
    throw environment(`cannot open store ${url}: ${(e as Error).message}`)
  }
}

/**
 * Opens the store. A writer (`mwp admit`) needs the admission service key: from
 * --admission-key / MWP_ADMISSION_KEY, else from the key file the store's configuration names.
 */
export async function openConfiguredStore(
  url: string | undefined,
  admissionKeyPath?: string,
  options: {writer?: boolean} = {},
): Promise<Store> {
  if (!url) throw usage('no store: give --store URL (or set MWP_STORE)')
  if (options.writer && !admissionKeyPath) {
    const reader = await open(url)
    admissionKeyPath = reader.config.admissionService.keyFile
    await reader.close()
    if (!admissionKeyPath)
      throw usage(
        'give --admission-key FILE (or set MWP_ADMISSION_KEY): only the admission service appends records, and this store names no key file',
      )
  }
  return open(url, admissionKeyPath ? readKey(admissionKeyPath, '--admission-key') : undefined)
}
