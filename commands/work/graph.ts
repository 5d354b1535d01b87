import {Args, Flags} from '@oclif/core'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {OperatorCommand, READING_CODES} from '../../src/operator/operator-command.js'
import {GRAPH_FORMATS, toDot, toMermaid, toSvg} from '../../src/operator/graph-formats.js'
import {renderWorkGraph} from '../../src/operator/render.js'
import {workGraph} from '../../src/operator/views.js'

const DRAW = {text: renderWorkGraph, dot: toDot, mermaid: toMermaid, svg: toSvg}

export default class WorkGraph extends OperatorCommand {
  static summary =
    'Show the WorkItem dependency graph with the remaining critical path marked: as text (*), Graphviz DOT, Mermaid or SVG.'
  static description = `Folded from the Group's verified Events. Progress is derived from the graph — counts per state, blocked and failed items, overdue deadlines, pending execution approvals and the longest chain of unfinished work — never a percentage.

--format dot and mermaid print graph text (edges from a dependency to the WorkItem waiting for it); svg prints a self-contained picture a browser opens (WorkItems in columns by dependency depth). The critical path is the class "critical" there (drawn red). With --json the result is the graph itself, whatever --format says.

${exitCodesHelp(READING_CODES)}`

  static examples = [
    '<%= config.bin %> work graph G',
    '<%= config.bin %> work graph G --format svg > graph.svg',
    '<%= config.bin %> work graph G --format dot | dot -Tpng > graph.png',
    '<%= config.bin %> work graph G --json',
  ]
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {
    ...operatorFlags,
    format: Flags.string({description: 'How to draw the graph.', options: [...GRAPH_FORMATS], default: 'text'}),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(WorkGraph)
    return this.withContext(flags, async (ctx) => {
      const graph = workGraph(await ctx.work(args.group))
      return {status: 'ok', result: graph, text: DRAW[flags.format as keyof typeof DRAW](graph)}
    })
  }
}
