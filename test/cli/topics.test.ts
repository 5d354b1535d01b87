// A bare topic through the real CLI (bin/run.js as a child process): `mwp mission` shows the
// topic's help (exit 0), and with --json it is one JSON object — a usage error (exit 2) listing the
// topic's commands — because --json always prints exactly one JSON object (src/cli/not-found.ts).
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {describe, expect, it} from 'vitest'
import {json, mwp} from '../support/cli.js'

describe('a bare topic', () => {
  it('with --json: one USAGE object listing its commands, exit 2; nothing on stderr', () => {
    const r = mwp(['mission', '--json'])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe('')
    const {status, error} = json(r)
    expect(status).toBe('error')
    expect(error.code).toBe('USAGE')
    expect(error.message).toMatch(/^mission is a topic: give one of its commands/)
    expect(error.commands).toContain('mwp mission create')
    expect(error.commands).toContain('mwp mission inspect')
    expect(error.commands.every((c: string) => c.startsWith('mwp mission '))).toBe(true)
    expect(json(mwp(['group', '--json'])).error.commands).toEqual(['mwp group tail'])
  })

  it('without --json: the topic help on stdout, exit 0; --help with --json still shows the help', () => {
    const r = mwp(['mission'])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^Create, direct, inspect, approve and cancel Missions/)
    expect(r.stdout).toContain('mission create')
    const help = mwp(['mission', '--help', '--json'])
    expect(help.status).toBe(0)
    expect(help.stdout).toBe(r.stdout)
  })

  it('a command with --json is untouched: it runs (here: an environment error, one object, exit 3)', () => {
    const r = mwp(['mission', 'list', '--json', '--config', '/nonexistent/mwp.config.json'])
    expect(r.status).toBe(3)
    expect(json(r).error.code).toBe('ENVIRONMENT')
  })
})
