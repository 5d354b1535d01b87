import {Flags} from '@oclif/core'
import {resolve} from 'node:path'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {admissionKeyFlag, storeFlag} from '../../src/cli/flags.js'
import {readKey} from '../../src/cli/store.js'
import {isIdentifier} from '../../src/signing/registry.js'
import {initStore} from '../../src/store/index.js'
import {DEFAULT_FRESHNESS, type StoreConfig} from '../../src/store/types.js'

export default class StoreInit extends MwpCommand {
  static summary =
    "Initialize a store (SQLite file or PostgreSQL database) with the Organization's admission configuration."
  static description = `Records the Organization ID, the admission service identity (from its key file: a service Principal, key ID and public key, plus the key file's absolute path so mwp admit can find it — the private key itself is never stored) and the Command freshness window. Running it again with the same configuration is a no-op; a different configuration is refused.

${exitCodesHelp({environment: 'cannot open the store, or it was initialized with another configuration'})}`

  static examples = [
    '<%= config.bin %> store init --store sqlite:mwp.db --organization urn:mwp:dev:org:example --admission-key fixtures/keys/admission.key.json',
    '<%= config.bin %> store init --store postgres://mwp@127.0.0.1:5432/mwp --organization urn:example:org --admission-key admission.key.json --max-age 120',
  ]

  static flags = {
    store: storeFlag,
    organization: Flags.string({description: 'Organization ID (absolute URI).', required: true}),
    'admission-key': admissionKeyFlag,
    'max-age': Flags.integer({
      description: 'Command freshness: how many seconds old issuedAt may be.',
      default: DEFAULT_FRESHNESS.maxAgeSeconds,
      min: 1,
    }),
    'max-future-skew': Flags.integer({
      description: 'Command freshness: how many seconds ahead of the trusted clock issuedAt may be.',
      default: DEFAULT_FRESHNESS.maxFutureSkewSeconds,
      min: 0,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(StoreInit)
    if (!flags.store) throw usage('give --store URL (or set MWP_STORE)')
    if (!flags['admission-key']) throw usage('give --admission-key FILE (or set MWP_ADMISSION_KEY)')
    if (!isIdentifier(flags.organization))
      throw usage(`--organization must be an absolute URI identifier: ${flags.organization}`)
    const key = readKey(flags['admission-key'], '--admission-key')
    if (key.principal?.type !== 'service') throw usage('the admission key must belong to a service Principal')
    const config: StoreConfig = {
      organizationId: flags.organization,
      admissionService: {
        principal: key.principal,
        keyId: key.keyId,
        publicKey: key.publicKeyB64,
        keyFile: resolve(flags['admission-key']),
      },
      freshness: {maxAgeSeconds: flags['max-age'], maxFutureSkewSeconds: flags['max-future-skew']},
    }
    try {
      await initStore(flags.store, config)
    } catch (e) {
      throw environment(`cannot initialize ${flags.store}: ${(e as Error).message}`)
    }
    return {
      status: 'ok',
      result: {store: flags.store, config},
      text: `initialized ${flags.store} for ${config.organizationId}\n  admission service: ${key.principal.id} (${key.keyId})\n  freshness: ${config.freshness.maxAgeSeconds}s old, ${config.freshness.maxFutureSkewSeconds}s ahead`,
    }
  }
}
