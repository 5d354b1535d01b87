import {Args, Flags} from '@oclif/core'
import {EXIT_CODES_HELP, MwpCommand, type Outcome, usage} from '../src/cli/base.js'
import {parseJsonBytes} from '../src/json/parse.js'
import {type SchemaResult, schemaCatalog} from '../src/schema/catalog.js'
import {payloadKinds, validatePayload} from '../src/schema/payload-schemas.js'

export default class Validate extends MwpCommand {
  static summary = "Validate a JSON document or a Command payload against one of the project's protocol schemas."
  static description = `Strictly parses the input and validates it against schemas/NAME.schema.json, or, for a Command kind (work.offer, message.post, …), against that kind's payload schema (schemas/payloads/KIND.schema.json, the one the authority checks), with every format asserted (protocol identifiers, the timestamp profile). Prints each schema error with the JSON Pointer of the failing member.

${EXIT_CODES_HELP}`

  static examples = [
    '<%= config.bin %> validate --schema command fixtures/documents/command.json',
    '<%= config.bin %> validate --schema work-item - < item.json',
    '<%= config.bin %> validate --schema work.offer offer-payload.json',
  ]
  static args = {file: Args.string({description: 'JSON file, or - for stdin.', required: true})}
  static flags = {
    schema: Flags.string({
      char: 's',
      description:
        'Schema name, e.g. command, event, work-item (see schemas/), or a Command kind for its payload, e.g. work.offer.',
      required: true,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(Validate)
    const name = flags.schema.replace(/\.schema\.json$/, '').replace(/^payloads\//, '')
    const validate = validator(name)
    if (validate === undefined) {
      const known = [...schemaCatalog().names(), ...payloadKinds()]
      throw usage(`unknown schema ${flags.schema}; one of: ${known.join(', ')}`)
    }
    const result = validate(parseJsonBytes(await this.readInput(args.file))) // not strict JSON: PROTOCOL_VIOLATION
    if (result.valid) return {status: 'ok', result: {schema: name, valid: true}, text: `valid ${name}`}
    const errors = result.errors.map((e) => ({
      path: e.instancePath || '/',
      pointer: e.pointer,
      message: e.message,
      keyword: e.keyword,
    }))
    return {
      status: 'rejected',
      code: 'SCHEMA_VALIDATION_FAILED',
      text: ['SCHEMA_VALIDATION_FAILED', ...errors.map((e) => `  ${e.pointer || '/'}: ${e.message}`)].join('\n'),
      extra: {result: {schema: name, valid: false, errors}},
    }
  }
}

/** A document schema of the catalog, else a Command kind's payload schema. */
function validator(name: string): ((value: unknown) => SchemaResult) | undefined {
  const catalog = schemaCatalog()
  if (catalog.names().includes(name)) return (value) => catalog.validate(name, value)
  if (payloadKinds().has(name)) return (value) => validatePayload(name, value)!
  return undefined
}
