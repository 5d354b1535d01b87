// Development TLS material for `mwp org init`, made by the wire layer's generator when this build
// has one (src/wire/dev-tls.ts, engineer E). Without it the configuration keeps `server.dev: true`
// and `mwp authority serve --dev-tls` makes the material at start.

export async function devTlsHook(_dir: string, _host: string): Promise<{cert: string; key: string; ca?: string} | null> {
  return null
}
