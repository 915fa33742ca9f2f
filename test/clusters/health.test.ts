// The health monitor against a healthy cluster, one that is down, one that never answers, and one whose
// credentials no longer open: the healthy one is checked without waiting for the others, and each status
// change is announced once.
import t from 'tap'
import { createServer, type Socket } from 'node:net'
import { once } from 'node:events'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { startTestCluster } from '../helpers/kube.ts'

const TIMEOUT_MS = 3000
const sim = await startTestCluster(t)
const { app } = await startTestApp(t, { CLUSTER_TIMEOUT_MS: TIMEOUT_MS, CLUSTER_HEALTH_CONCURRENCY: 4 })
const user = await registerUser(app)

// Accepts connections and never answers: the TLS handshake hangs until the client gives up.
const sockets = new Set<Socket>()
const silent = createServer((s) => { sockets.add(s); s.on('close', () => sockets.delete(s)) }).listen(0, '127.0.0.1')
await once(silent, 'listening')
t.teardown(() => { for (const s of sockets) s.destroy(); silent.close() })
const silentPort = (silent.address() as { port: number }).port

const add = async (name: string, server: string) => {
  const res = await app.inject({ method: 'POST', url: '/v1/api/clusters', headers: { authorization: `Bearer ${user.token}` }, payload: { name, server, auth_type: 'token', credentials: { token: sim.identities.admin.token, ca_data: sim.caPem } } })
  if (res.statusCode !== 201) throw new Error(`could not add ${name}: ${res.body}`)
  return res.json().id as string
}
const healthy = await add('healthy', sim.url)
await add('down', 'https://127.0.0.1:1')
await add('slow', `https://127.0.0.1:${silentPort}`)
const broken = await add('broken', sim.url)
await app.db.collection('clusters').updateOne({ _id: broken as never }, { $set: { credentials_sealed: 'sealed:v1:unknownkey00:AAAAAAAAAAAAAAAA:AAAA:AAAAAAAAAAAAAAAAAAAAAA' } })

const events: Array<{ name: string; to: string }> = []
app.bus.on('cluster.status', (e) => events.push({ name: e.name, to: e.to }))

t.test('one round: the healthy cluster is done before the slow one times out', async (t) => {
  const order: string[] = []
  const off = app.bus.on('cluster.status', (e) => order.push(e.name))
  const result = await app.services.clusterHealth.checkAll()
  off()
  t.ok(order.indexOf('healthy') < order.indexOf('slow'), `healthy was not held up by the slow cluster (order: ${order.join(', ')})`)
  t.equal(order.at(-1), 'slow', 'the silent cluster finishes last, at its timeout')
  t.same(result, { checked: 4, connected: 1, failed: 3 })
  const status = async (name: string) => (await app.db.collection('clusters').findOne({ name }))!
  t.match(await status('healthy'), { status: 'connected', status_message: /healthy/ })
  t.match(await status('down'), { status: 'error', status_message: /connection refused/ })
  t.match(await status('slow'), { status: 'error', status_message: /timed out/ })
  t.match(await status('broken'), { status: 'error', status_message: /stored credentials of cluster "broken" cannot be opened \(was ENCRYPTION_KEY changed\?\)/ })
  for (const name of ['healthy', 'down', 'slow', 'broken']) t.ok((await status(name)).last_checked_at instanceof Date, `${name} checked`)
})

t.test('a second round with no change announces nothing; a change is announced once', async (t) => {
  t.same(events.map((e) => e.name).sort(), ['broken', 'down', 'healthy', 'slow'])
  events.length = 0
  await app.services.clusterHealth.checkAll()
  t.same(events, [], 'no status changed, nothing announced')
  await sim.faults.stop()
  await app.services.clusterHealth.checkAll()
  t.same(events, [{ name: 'healthy', to: 'error' }])
  await sim.faults.restart()
  await app.services.clusterHealth.checkAll()
  t.same(events, [{ name: 'healthy', to: 'error' }, { name: 'healthy', to: 'connected' }])
})

t.test('overlapping calls share one round', async (t) => {
  const [a, b] = [app.services.clusterHealth.checkAll(), app.services.clusterHealth.checkAll()]
  t.equal(a, b)
  await a
})
