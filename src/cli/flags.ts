// Flags shared by several commands, each with its MWP_* environment twin.

import {Flags} from '@oclif/core'
import {DOCUMENT_KINDS} from '../signing/profiles.js'

export const kindFlag = (required = false) =>
  Flags.string({
    char: 'k',
    description: 'Signed Document kind (profile ID).',
    options: [...DOCUMENT_KINDS],
    required,
  })

export const registryFlag = Flags.string({
  char: 'r',
  description: 'Organization registry snapshot file (complete: every binding and validity record).',
  env: 'MWP_REGISTRY',
  required: true,
})

export const keyFlag = Flags.string({
  description: 'Private key file (made by `mwp key generate`).',
  env: 'MWP_KEY',
  required: true,
})

export const storeFlag = Flags.string({
  description: 'Store URL: sqlite:PATH (embedded) or postgres://USER@HOST:PORT/DB.',
  env: 'MWP_STORE',
})

export const admissionKeyFlag = Flags.string({
  description: "The Organization admission service's private key file (the store's only record writer).",
  env: 'MWP_ADMISSION_KEY',
})

/**
 * A repeatable flag (`--kind a --kind b`): one value per occurrence, so it never swallows the
 * positional argument after it, as oclif's greedy `multiple` does (`--kind work. G` took G as a
 * second kind). Spread into Flags.string({...repeatable, …}).
 */
export const repeatable = {multiple: true, multipleNonGreedy: true} as const
