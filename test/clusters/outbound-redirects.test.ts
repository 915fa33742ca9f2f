// The finding of issue 22, through the API: with OUTBOUND_ALLOW_CIDRS=127.0.0.0/8 a cluster `server` that
// answers every request with a redirect (301/302/307/308) to another address made the service connect
// there. Here every path that contacts a cluster (add + test, refresh, metrics, the health check, a run,
// a resource sync, pod logs, the resource watches) is driven against such a server, for every forbidden address form, while a second
// listener on the redirect's target counts connections: it must see none.
import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { shopGraph, TRIGGER } from '../runs/fixture.ts'
import { startForbiddenTarget } from '../helpers/forbidden-target.ts'

const { port: P, connections } = await startForbiddenTarget(t)

const FORMS = [
  `http://0.0.0.0:${P}/`, `http://[::1]:${P}/`, `http://[::ffff:127.0.0.1]:${P}/`, `http://2130706433:${P}/`, `http://0177.0.0.1:${P}/`,
  `http://0x7f000001:${P}/`, `http://127.1:${P}/`, `http://127.0.0.1:${P}/`, `http://localhost:${P}/`, `http://169.254.169.254/latest/meta-data/`,
]
const STATUSES = [301, 302, 307, 308]

let redirect = { status: 302, location: FORMS[0] }
const requests: string[] = []
let watchSeen: (() => void) | undefined
const server = http.createServer((req, res) => {
  requests.push(`${req.method} ${req.url}`)
  watchSeen?.()
  res.writeHead(redirect.status, { location: redirect.location }).end()
})
server.listen(0, '127.0.0.1')
await once(server, 'listening')
t.teardown(() => server.close())
const SERVER = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`

const { app } = await startTestApp(t, { OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', ALLOW_INSECURE_CLUSTERS: true, RUN_READY_TIMEOUT_MS: 1000, WATCH_BACKOFF_BASE_MS: 20, WATCH_BACKOFF_MAX_MS: 100 })
const owner = await registerUser(app)
const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers: owner.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const REFUSED = /not allowed by the outbound policy/

const added = await call('POST', '/v1/api/clusters', { name: 'redir', server: SERVER, auth_type: 'token', credentials: { token: 'tok-redirect-test', insecure_skip_tls_verify: true } })
if (added.status !== 201) throw new Error(`cluster: ${added.status} ${JSON.stringify(added.body)}`)

t.test('connection test, refresh and metrics: every redirect refused, the target never contacted', async (t) => {
  // Every form once, the statuses taking turns, and every status once more on the metadata address.
  const cases = [...FORMS.map((location, i) => ({ status: STATUSES[i % STATUSES.length], location })), ...STATUSES.map((status) => ({ status, location: FORMS[9] }))]
  for (const { status, location } of cases) {
    {
      redirect = { status, location }
      requests.length = 0
      const tested = await call('POST', '/v1/api/clusters/redir/test')
      t.equal(tested.status, 502, `test: ${status} → ${location}`)
      t.match(tested.body.error, REFUSED)
      t.ok(requests.length > 0, 'the configured server itself was asked')
    }
  }
  for (const location of FORMS.slice(0, 5)) {
    redirect = { status: 307, location }
    const refreshed = await call('POST', '/v1/api/clusters/redir/refresh')
    t.equal(refreshed.status, 502, `refresh → ${location}`)
    t.match(refreshed.body.error, REFUSED)
    const metrics = await call('GET', '/v1/api/clusters/redir/metrics')
    t.notOk(JSON.stringify(metrics.body).includes(String(P)), `metrics name no redirect target (${location})`)
  }
  t.same(connections, [], 'the redirect target saw no connection')
})

t.test('the health check marks the cluster unreachable without following', async (t) => {
  for (const location of FORMS.slice(5)) {
    redirect = { status: 308, location }
    await app.services.clusterHealth.checkAll()
    const status = await call('GET', '/v1/api/clusters/redir/status')
    t.match(status.body, { status: 'error' }, location)
    t.match(JSON.stringify(status.body), REFUSED)
  }
  t.same(connections, [])
})

t.test('a run and a resource sync against the redirecting cluster fail and touch nothing else', async (t) => {
  const wf = await call('POST', '/v1/api/workflows', { name: 'redirected', cluster_id: 'redir' })
  t.equal(wf.status, 201)
  t.equal((await call('POST', `/v1/api/workflows/${wf.body.id}/save`, shopGraph({ namespace: 'redir' }))).status, 200)
  for (const location of [FORMS[2], FORMS[9]]) {
    redirect = { status: 302, location }
    const run = await call('POST', `/v1/api/workflows/${wf.body.id}/run`, { trigger_data: TRIGGER })
    t.equal(run.status, 200, location)
    t.equal(run.body.status, 'failed')
    t.match(run.body.error, REFUSED)
    const sync = await call('POST', '/v1/api/resources/sync', { workflow_id: wf.body.id })
    t.ok(sync.status < 500, `sync answers ${sync.status}`)
  }
  t.same(connections, [])
})

t.test('a tracked resource on that cluster: its log stream and its watches are refused too', async (t) => {
  const wf = await call('POST', '/v1/api/workflows', { name: 'tracked-on-redirect', cluster_id: 'redir' })
  t.equal((await call('POST', `/v1/api/workflows/${wf.body.id}/save`, shopGraph({ namespace: 'apps' }))).status, 200)
  // A workflow is watched once it has been run (even a failed run); this one fails on the redirect.
  redirect = { status: 302, location: FORMS[0] }
  t.equal((await call('POST', `/v1/api/workflows/${wf.body.id}/run`, { trigger_data: TRIGGER })).body.status, 'failed')
  await app.services.resources.recordApplied(owner.user.id, { workflow_id: wf.body.id, cluster_id: added.body.id, cluster: 'redir' }, [
    { node_id: 'web', api_version: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'apps', action: 'created', uid: null, labels: {} },
  ])
  const [resource] = await app.services.resources.findForNode(owner.user.id, wf.body.id, 'web')
  for (const location of [FORMS[1], FORMS[3], FORMS[9]]) {
    redirect = { status: 302, location }
    const logs = await app.inject({ method: 'GET', url: `/v1/api/resources/${resource.id}/logs/stream?follow=false`, headers: owner.headers })
    t.ok(logs.statusCode === 502 || /event: (error|complete)/.test(logs.body), `logs → ${location}: ${logs.statusCode}`)
    t.match(logs.body, REFUSED)
  }
  // The watch service (watch-hub) first asks the API group which resource serves the kind, then lists and
  // watches it; every attempt, and every retry after backoff, meets the redirect.
  requests.length = 0
  for (const location of [FORMS[0], FORMS[2], FORMS[9]]) {
    redirect = { status: 307, location }
    let seen = 0
    await new Promise<void>((resolve) => {
      watchSeen = () => { if (++seen === 2) resolve() }
      app.bus.emit('resources.changed', { owner_id: owner.user.id })
    })
    t.pass(`two watch attempts met the redirect to ${location}`)
  }
  watchSeen = undefined
  t.ok(requests.includes('GET /apis/apps/v1'), 'those were the watch service asking about the tracked Deployment\'s API group')
  t.same(connections, [], 'the redirect target saw no connection')
})
