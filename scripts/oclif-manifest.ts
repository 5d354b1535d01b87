// Writes oclif.manifest.json after the build. With a manifest, `mwp <command>` imports only the
// module of the command it runs instead of globbing and importing every command module: most
// of the CLI's start-up time otherwise.

import {Config, settings} from '@oclif/core'
import {rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../src/schema/catalog.js'

const root = packageRoot()
const path = join(root, 'oclif.manifest.json')
rmSync(path, {force: true}) // build from the compiled commands, never from a stale manifest
// Point at dist/ whatever NODE_ENV says (vitest sets "test", which makes oclif prefer the .ts
// sources — a manifest built that way sends every later `mwp` run to files Node cannot load).
settings.enableAutoTranspile = false
const config = await Config.load({root})
const plugin = config.getPluginsList().find((p) => p.root === root) as unknown as {manifest: {commands: object}}
writeFileSync(path, JSON.stringify(plugin.manifest) + '\n')
console.error(`wrote oclif.manifest.json (${Object.keys(plugin.manifest.commands).length} commands)`)
