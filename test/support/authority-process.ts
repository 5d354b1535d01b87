// `mwp authority serve` as a real subprocess of the built CLI, for tests that talk to a served
// Organization: resolves `listening` with the printed URL (and CA file under --dev-tls).

import {spawn} from 'node:child_process'
import {join} from 'node:path'
import {PROJECT_ROOT} from './upstream.js'

export function serveProcess(config: string, args: string[]) {
  const child = spawn(
    process.execPath,
    [join(PROJECT_ROOT, 'bin/run.js'), 'authority', 'serve', '--config', config, ...args],
    {
      env: {...process.env, NO_COLOR: '1'},
    },
  )
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const listening = new Promise<{url: string; ca?: string}>((resolve, reject) => {
    const check = () => {
      const url = /listening on (\S+)/.exec(stdout)?.[1]
      if (url && (!args.includes('--dev-tls') || /CA file: (\S+)/.test(stdout)))
        resolve({url, ca: /CA file: (\S+)/.exec(stdout)?.[1]})
    }
    child.stdout.on('data', check)
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)))
  })
  return {child, listening, exited, out: () => ({stdout, stderr})}
}
