// Child process for test/store/pg-driver.test.ts: a connection that dies while it fetches the
// array types (the first statement `postgres` sends on every new connection, before the caller's
// query). Through a TCP proxy on loopback that closes the connection, as a dying backend does,
// the first time the client sends that statement, the caller's query must still succeed on the
// reconnected connection, and the lost type fetch must not surface as an unhandled rejection,
// which ends the process (it did on the vendored copy between patches 6 and 8; stop 22's CI:
// `Error: write CONNECTION_CLOSED`; the npm copy, without patch 6, survives this case).
// argv[2]: the client module; argv[3]: the database URL. Prints one JSON line, exits 0.
import {connect, createServer} from 'node:net'

const [modulePath, url] = process.argv.slice(2)
const {default: postgres} = await import(modulePath)
const target = new URL(url)
const port = Number(target.port)
let cuts = 0
const proxy = createServer((client) => {
  const upstream = connect(port, target.hostname)
  const end = () => (client.destroy(), upstream.destroy())
  client.on('error', end).on('close', end)
  upstream.on('error', end).on('close', end)
  upstream.pipe(client)
  client.on('data', (chunk) => {
    if (cuts === 0 && chunk.includes('typarray')) {
      cuts++
      client.destroy() // a FIN, as when the backend exits (a postmaster kill)
      upstream.destroy()
      return
    }
    upstream.write(chunk)
  })
})
await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve))
target.port = String(proxy.address().port)
const sql = postgres(target.toString(), {max: 1, onnotice: () => {}, connect_timeout: 10})
const [{one}] = await sql`SELECT 1 AS one`
await sql.end({timeout: 5})
proxy.close()
console.log(JSON.stringify({cuts, one}))
