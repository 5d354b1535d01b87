// Shell completion (@oclif/plugin-autocomplete) through the real CLI: the cache is built by
// `mwp autocomplete --refresh-cache` into a temporary HOME, the bash setup line `mwp autocomplete
// script bash` prints is evaluated in a real bash, and the function it registers for `mwp` is
// called with COMP_WORDS/COMP_CWORD as bash's programmable completion would.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {mwp} from '../support/cli.js'

let home: string
let env: NodeJS.ProcessEnv
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'mwp-completion-'))
  env = {HOME: home, XDG_CACHE_HOME: join(home, '.cache')}
  const built = mwp(['autocomplete', '--refresh-cache'], {env})
  expect(built.status, built.stderr).toBe(0)
})
afterAll(() => rmSync(home, {recursive: true, force: true}))

/** The candidates bash's completion function for `mwp` offers for `words`, the last one being completed. */
function complete(words: string[]): string[] {
  const setup = mwp(['autocomplete', 'script', 'bash'], {env})
  expect(setup.status, setup.stderr).toBe(0)
  const script = `
eval "$MWP_SETUP"
fn=$(complete -p mwp | sed -E 's/.*-F ([^ ]+).*/\\1/')
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=\${#COMP_LINE}
"$fn" mwp "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"`
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', script, 'bash', ...words], {
    env: {...process.env, ...env, MWP_SETUP: setup.stdout},
    encoding: 'utf8',
  })
  expect(r.status, r.stderr).toBe(0)
  return [...new Set(r.stdout.split('\n').filter(Boolean))]
}

describe('bash completion', () => {
  it('completes a topic from its prefix', () => {
    expect(complete(['mwp', 'miss'])).toEqual(['mission'])
  })

  it("lists a topic's commands after `mwp mission `", () => {
    const candidates = complete(['mwp', 'mission', ''])
    expect(candidates).toContain('approve')
    expect(candidates).toContain('cancel')
    expect(candidates).not.toContain('mission')
  })

  it("completes a command's flags", () => {
    expect(complete(['mwp', 'verify', '--reg'])).toEqual(['--registry'])
  })
})

describe('zsh completion', () => {
  it('prints a setup line that loads a #compdef mwp function knowing every mission command', () => {
    const setup = mwp(['autocomplete', 'script', 'zsh'], {env})
    expect(setup.status, setup.stderr).toBe(0)
    const path = /MWP_AC_ZSH_SETUP_PATH=(\S+)/.exec(setup.stdout)?.[1]
    expect(path && existsSync(path)).toBeTruthy()
    const fpath = /fpath=\(\s*(\S+)/.exec(readFileSync(path!, 'utf8'))?.[1]
    const fn = readFileSync(join(fpath!, '_mwp'), 'utf8')
    expect(fn.startsWith('#compdef mwp')).toBe(true)
    expect(fn).toContain('"approve[')
  })
})
