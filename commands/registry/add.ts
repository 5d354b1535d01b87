import {Flags} from '@oclif/core'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {registryFlag} from '../../src/cli/flags.js'
import {KeyFileError, readKeyFile} from '../../src/crypto/keyfile.js'
import {formatUtcNow} from '../../src/json/timestamp.js'
import type {Principal} from '../../src/signing/profiles.js'
import {applyRegistryEdit} from '../../src/cli/registry-edit.js'
import {addBinding, parsePrincipal} from '../../src/signing/registry-edit.js'

export default class RegistryAdd extends MwpCommand {
  static summary = 'Add a signing-key binding to a registry file.'
  static description = `Binds a key ID to one Principal and one Ed25519 public key, from a key file (--key) or given explicitly (--public-key, --key-id, --principal). The binding starts with an empty validity history; --valid-from defaults to now (UTC, Z).

The edit is refused (exit 1, the file unchanged byte for byte) when it would break a §6.4 Registry invariant: key-id-rebinding (the key ID is already bound to another Principal or key: key IDs are never reused), valid-from-changed, binding-exists (identical binding already present), key-alias (the same Principal and key under another key ID), public-key-reuse (the key is bound elsewhere), public-key-* (not a canonical prime-order Ed25519 point), registry-invalid (the file itself fails \`mwp registry check\`). The file is replaced atomically.

${exitCodesHelp({rejected: 'the edit would break a Registry invariant (the reason is printed; the file is unchanged)', environment: 'cannot read or replace the registry file, or the key file'})}`

  static examples = [
    '<%= config.bin %> registry add --registry registry.json --key alice.key.json',
    '<%= config.bin %> registry add --registry registry.json --public-key 11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo --key-id urn:example:key:alice-1 --principal agent:urn:example:agent:alice --valid-from 2026-07-01T00:00:00Z',
  ]

  static flags = {
    registry: registryFlag,
    key: Flags.string({
      description: 'Key file (from `mwp key generate`) supplying key ID, Principal and public key.',
      env: 'MWP_KEY',
    }),
    'public-key': Flags.string({
      description: 'Ed25519 public key, canonical unpadded base64url (with --key-id and --principal).',
    }),
    'key-id': Flags.string({description: 'Key ID (absolute URI); with --key it must match the key file.'}),
    principal: Flags.string({
      description:
        'Principal as TYPE:URI (agent|human|service); needed with --public-key, or for an upstream test-only key file.',
    }),
    'valid-from': Flags.string({description: 'Start of validity (protocol timestamp). Default: now, UTC.'}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(RegistryAdd)
    const explicitKeyFlag = this.argv.some((a) => a === '--key' || a.startsWith('--key='))
    let principal: Principal | undefined
    try {
      if (flags.principal !== undefined) principal = parsePrincipal(flags.principal)
    } catch (e) {
      throw usage(`--principal: ${(e as Error).message}`)
    }

    let keyId: string
    let publicKey: string
    if (flags['public-key'] !== undefined) {
      // An explicit --public-key wins over a key file named only by MWP_KEY.
      if (explicitKeyFlag) throw usage('give either --key or --public-key, not both')
      if (flags['key-id'] === undefined || principal === undefined)
        throw usage('--public-key needs --key-id and --principal')
      keyId = flags['key-id']
      publicKey = flags['public-key']
    } else if (flags.key !== undefined) {
      let key
      try {
        key = readKeyFile(flags.key)
      } catch (e) {
        if (e instanceof KeyFileError && e.code === 'io-error') throw environment(e.message)
        if (e instanceof KeyFileError) throw usage(`--key ${flags.key}: ${e.message}`)
        throw e
      }
      if (flags['key-id'] !== undefined && flags['key-id'] !== key.keyId)
        throw usage(`--key-id ${flags['key-id']} does not match the key file's keyId ${key.keyId}`)
      if (key.principal && principal && (key.principal.type !== principal.type || key.principal.id !== principal.id)) {
        throw usage(
          `--principal ${principal.type}:${principal.id} does not match the key file's principal ${key.principal.type}:${key.principal.id}`,
        )
      }
      principal ??= key.principal
      if (!principal)
        throw usage(`the key file ${flags.key} names no principal (upstream test-only format): give --principal`)
      keyId = key.keyId
      publicKey = key.publicKeyB64
    } else {
      throw usage('give --key KEYFILE, or --public-key with --key-id and --principal')
    }
    const validFrom = flags['valid-from'] ?? formatUtcNow()

    const edited = applyRegistryEdit(flags.registry, (reg) =>
      addBinding(reg, {keyId, principal: principal!, publicKey, validFrom}),
    )
    if (!('after' in edited)) return edited
    const added = edited.after.bindings.at(-1)!
    return {status: 'ok', result: {registry: flags.registry, binding: added}, text: JSON.stringify(added, null, 2)}
  }
}
