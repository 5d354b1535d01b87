import {Args, Flags} from '@oclif/core'
import {acceptNew} from '../src/admission/accept.js'
import {exitCodesHelp, MwpCommand, type Outcome} from '../src/cli/base.js'
import {admissionKeyFlag, documentKindFlag, registryFlag, storeFlag} from '../src/cli/flags.js'
import {rejectionOutcome} from '../src/cli/rejections.js'
import {openConfiguredStore} from '../src/cli/store.js'
import type {DocumentKind} from '../src/signing/profiles.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {Rejection} from '../src/signing/verify.js'

export default class Admit extends MwpCommand {
  static summary =
    'First-admit a Signed Document: verify it, check Command freshness, and record when the Organization first accepted it.'
  static description = `Runs the six verification stages with the current registry, then (for Commands) the freshness window at the trusted acceptance time, then First Admission in the store (spec §6.4): the First-Admission Record for the document's signing hash is looked up, and only when it is authoritatively absent is a new record appended by the admission service. Prints the authoritative record. Retrying is idempotent: the same record comes back. A rejection prints only the wire code (AUTH_INVALID_SIGNATURE for admission and freshness failures); its stage and reason go to the store's audit log (mwp audit list) and, with --explain, to this terminal.

${exitCodesHelp({rejected: 'the document failed verification, freshness or First Admission (the wire code is printed; --explain says why)', environment: 'cannot read the document or the registry, cannot open the store'})}`

  static examples = [
    '<%= config.bin %> admit --registry fixtures/registry.json --store sqlite:mwp.db signed.json',
    '<%= config.bin %> admit --registry fixtures/registry.json --store sqlite:mwp.db --admission-key fixtures/keys/admission.key.json signed.json',
  ]

  static args = {file: Args.string({description: 'Signed Document, or - for stdin.', required: true})}
  static flags = {
    'document-kind': documentKindFlag(),
    registry: registryFlag,
    store: storeFlag,
    'admission-key': admissionKeyFlag,
    explain: Flags.boolean({
      description: 'Show the protected failure stage and reason (local operator only).',
      default: false,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(Admit)
    const evidence = RegistryEvidence.fromBytes(await this.readInput(flags.registry))
    const bytes = await this.readInput(args.file)
    const store = await openConfiguredStore(flags.store, flags['admission-key'], {writer: true})
    try {
      const result = await acceptNew(
        {
          bytes,
          kind: flags['document-kind'] as DocumentKind | undefined,
          subject: args.file === '-' ? 'stdin' : args.file,
        },
        evidence,
        store,
      )
      if (result instanceof Rejection) return rejectionOutcome(result, flags.explain)
      const {record} = result.admission
      return {
        status: 'ok',
        result: {outcome: result.admission.outcome, record},
        text: `${result.admission.outcome === 'committed' ? 'admitted' : 'already admitted'} ${record.documentKind} ${record.signingHash}\n${JSON.stringify(record, null, 2)}`,
      }
    } finally {
      await store.close()
    }
  }
}
