// Development TLS material for `mwp org init`: the wire layer's generator (src/wire/dev-tls.ts)
// writes a throwaway CA and a loopback server certificate into DIR/tls, and the configuration
// names them (server.tls), so `mwp authority serve --config` and the clients (which trust
// server.tls.ca) agree without further flags. Development only.

import {join} from 'node:path'
import {writeDevTls} from '../wire/dev-tls.js'

export async function devTlsHook(dir: string, _host: string): Promise<{cert: string; key: string; ca: string}> {
  writeDevTls(join(dir, 'tls'))
  return {cert: 'tls/server.pem', key: 'tls/server.key', ca: 'tls/ca.pem'}
}
