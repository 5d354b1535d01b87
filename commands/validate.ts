import {Args, Flags} from '@oclif/core'
import {EXIT_CODES_HELP, MwpCommand, type Outcome, usage} from '../src/cli/base.js'
import {parseJsonBytes} from '../src/json/parse.js'
import {schemaCatalog} from '../src/schema/catalog.js'

export default class Validate extends MwpCommand {
  static summary = "Validate a JSON document against one of the project's protocol schemas."
  static description = `Strictly parses the input and validates it against schemas/NAME.schema.json with every format asserted (protocol identifiers, the timestamp profile). Prints each schema error for the local operator.

${EXIT_CODES_HELP}`

  static examples = [
    '<%= config.bin %> validate --schema command fixtures/documents/command.json',
    '<%= config.bin %> validate --schema work-item - < item.json',
  ]
  static args = {file: Args.string({description: 'JSON file, or - for stdin.', required: true})}
  static flags = {
    schema: Flags.string({
      char: 's',
      description: 'Schema name, e.g. command, event, work-item (see schemas/).',
      required: true,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(Validate)
    const catalog = schemaCatalog()
    const name = flags.schema.replace(/\.schema\.json$/, '')
    if (!catalog.names().some((n) => n === name || n === `${name}.schema.json`)) {
      throw usage(
        `unknown schema ${flags.schema}; one of: ${catalog
          .names()
          .map((n) => n.replace(/\.schema\.json$/, ''))
          .join(', ')}`,
      )
    }
    const result = catalog.validate(name, parseJsonBytes(await this.readInput(args.file))) // not strict JSON: PROTOCOL_VIOLATION
    if (result.valid) return {status: 'ok', result: {schema: name, valid: true}, text: `valid ${name}`}
    const errors = result.errors.map((e) => ({path: e.instancePath || '/', message: e.message, keyword: e.keyword}))
    return {
      status: 'rejected',
      code: 'SCHEMA_VALIDATION_FAILED',
      text: ['SCHEMA_VALIDATION_FAILED', ...errors.map((e) => `  ${e.path}: ${e.message}`)].join('\n'),
      extra: {result: {schema: name, valid: false, errors}},
    }
  }
}
