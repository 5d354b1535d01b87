// Child process for test/store/pg-driver.test.ts: drives one `postgres` client module (argv[2]:
// the npm copy or the vendored one) through the upstream bug of porsager/postgres 3.4.9 (issues
// #1066, #1154, #1208): when a transaction's backend is terminated, the library issues the
// transaction's ROLLBACK on the closed connection, whose socket is null; the write is deferred
// to setImmediate, where `socket.write` throws a TypeError no caller can catch, and the process
// exits. Surviving means: each killed transaction rejects with a catchable error, and the pool
// reconnects by itself, so a transaction and a query after each kill succeed.
// Prints one JSON line and exits 0 when it survived every round (argv[4], default 5).
const [modulePath, url, roundsArg] = process.argv.slice(2)
const {default: postgres} = await import(modulePath)
const sql = postgres(url, {max: 2, onnotice: () => {}, connect_timeout: 10})
const killer = postgres(url, {max: 1, onnotice: () => {}})
const result = {killed: [], after: []}
for (let round = 0; round < Number(roundsArg ?? 5); round++) {
  try {
    await sql.begin(async (tx) => {
      const [{pid}] = await tx`SELECT pg_backend_pid() AS pid`
      await killer`SELECT pg_terminate_backend(${pid})`
      await tx`SELECT pg_sleep(0.05)`
    })
    result.killed.push('committed')
  } catch (e) {
    result.killed.push(e.code ?? e.message)
  }
  const [{n}] = await sql.begin((tx) => tx`SELECT ${round}::int AS n`)
  const [{one}] = await sql`SELECT 1 AS one`
  result.after.push([n, one])
}
await Promise.all([sql.end({timeout: 5}), killer.end({timeout: 5})])
console.log(JSON.stringify(result))
