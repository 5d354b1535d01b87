// Flags shared by several commands, each with its MWP_* environment twin.

import {Flags} from '@oclif/core'
import {DOCUMENT_KINDS} from '../signing/profiles.js'

/**
 * The earlier names of a renamed flag: they keep working for existing scripts, and oclif warns on
 * stderr that they are deprecated. One name has one meaning across all commands (issue #18).
 */
export const formerly = (...names: string[]) => ({aliases: names, deprecateAliases: true})

/** `--document-kind`: which Signed Document profile a file is (`--kind` is the Command kind). */
export const documentKindFlag = (required = false) =>
  Flags.string({
    char: 'k',
    description: 'Signed Document kind (profile ID).',
    options: [...DOCUMENT_KINDS],
    required,
    ...formerly('kind'),
  })

/**
 * `--message`: a human's own words sent in a Command or an Approval, whatever its member is named
 * (`member`, e.g. payload.reason); `former` is the flag's earlier name.
 */
export const messageFlag = (lead: string, member: string, former: string, required = true) =>
  Flags.string({char: 'm', description: `${lead} (your words, sent as ${member}).`, required, ...formerly(former)})

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
 * A repeatable flag (`--event-kind a --event-kind b`): one value per occurrence, so it never swallows the
 * positional argument after it, as oclif's greedy `multiple` does (`--event-kind work. G` took G as a
 * second kind). Spread into Flags.string({...repeatable, …}).
 */
export const repeatable = {multiple: true, multipleNonGreedy: true} as const
