import {Flags} from '@oclif/core'
import {randomUUID} from 'node:crypto'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {KeyFileError, generateSigningKey, serializeKeyFile, writeKeyFile} from '../../src/crypto/keyfile.js'
import {RegistryEditError, parsePrincipal} from '../../src/signing/registry-edit.js'
import {isIdentifier} from '../../src/signing/registry.js'

export default class KeyGenerate extends MwpCommand {
  static summary = 'Generate an Ed25519 signing key for a Principal.'
  static description = `Creates a new private key file (mode 0600) and prints the PUBLIC binding {keyId, principal, algorithm, publicKey}, ready for \`mwp registry add --key FILE\`.

--principal is TYPE:URI with TYPE agent, human or service (split on the first colon), e.g. agent:urn:example:agent:alice. The key ID defaults to a fresh urn:uuid.

With --out the private key is written to that file, which must not exist yet (exit 3 otherwise). Without --out the private key file JSON goes to stdout, but only when stdout is not a terminal (a pipe or a redirect); the public binding then goes to stderr. A private key is never printed to a terminal.

With --json, stdout carries one object {status, result: {binding, keyFile}}; keyFile is the path written, or null when the key file object is returned as result.privateKey instead.

${exitCodesHelp({environment: '--out exists already or cannot be written'})}`

  static examples = [
    '<%= config.bin %> key generate --principal agent:urn:example:agent:alice --out alice.key.json',
    '<%= config.bin %> key generate --principal service:urn:example:service:authority --key-id urn:example:key:authority-1 --out authority.key.json',
    '<%= config.bin %> key generate --principal human:urn:example:human:bob > bob.key.json',
  ]

  static flags = {
    principal: Flags.string({
      description: 'The Principal the key belongs to, as TYPE:URI (agent|human|service).',
      required: true,
    }),
    'key-id': Flags.string({description: 'Key ID (absolute URI). Default: urn:uuid:<random v4>.'}),
    out: Flags.string({
      char: 'o',
      description: 'Private key file to create (mode 0600; never overwritten).',
      env: 'MWP_KEY_OUT',
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(KeyGenerate)
    const json = flags.json
    let principal
    try {
      principal = parsePrincipal(flags.principal)
    } catch (e) {
      if (e instanceof RegistryEditError) throw usage(`--principal: ${e.message}`)
      throw e
    }
    const keyId = flags['key-id'] ?? `urn:uuid:${randomUUID().toLowerCase()}`
    if (!isIdentifier(keyId)) throw usage(`--key-id is not an absolute URI identifier: ${JSON.stringify(keyId)}`)
    if (flags.out === undefined && process.stdout.isTTY) {
      throw usage(
        'refusing to print a private key to the terminal: give --out FILE, or redirect stdout to a file or pipe',
      )
    }

    const key = generateSigningKey({keyId, principal})
    const binding = {keyId, principal, algorithm: 'Ed25519', publicKey: key.publicKeyB64}
    const bindingText = JSON.stringify(binding, null, 2)

    if (flags.out !== undefined) {
      try {
        writeKeyFile(flags.out, key)
      } catch (e) {
        if (e instanceof KeyFileError && e.code === 'file-exists')
          throw environment(`${flags.out} already exists; a key file is never overwritten — choose another --out`)
        if (e instanceof KeyFileError) throw environment(e.message)
        throw e
      }
      process.stderr.write(`mwp: wrote private key ${flags.out} (mode 0600)\n`)
      return {status: 'ok', result: {binding, keyFile: flags.out}, text: bindingText}
    }

    // No --out, stdout is a pipe or a file.
    const keyFileText = serializeKeyFile(key)
    if (json) return {status: 'ok', result: {binding, keyFile: null, privateKey: JSON.parse(keyFileText)}}
    process.stdout.write(keyFileText)
    process.stderr.write(bindingText + '\n')
    return {status: 'ok', result: {binding, keyFile: null}}
  }
}
