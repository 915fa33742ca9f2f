// Every stream kind, on both prefixes, opened many times over raw sockets: the status line and headers are
// the first bytes on the wire, before any frame, replayed or live (API.md §14). Node 24.22 sends a reply's
// head later than 24.21 did, so a frame written beside the reply object overtook it on every connection to a
// finished build's stream; this walks workflow, resource, pod log, notification, build (finished and live)
// and import (finished and live) streams HEADERS_FIRST_CONNECTIONS (200) times each, then reads each kind
// with `fetch`, which rejects a reply whose bytes do not start with a status line.
import t from 'tap'
import net from 'node:net'
import { buildFixture } from '../builds/fixture.ts'
import { node, edge, TRIGGER } from '../runs/fixture.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { newId } from '../../src/repositories/ids.ts'

const CONNECTIONS = Number(process.env.HEADERS_FIRST_CONNECTIONS ?? 200)

const f = await buildFixture(t, { MAX_STREAMS_PER_USER: 10_000, RATE_LIMIT_MAX: 100_000, RUN_READY_TIMEOUT_MS: 8000 })
const { app, owner, call, base } = f
const { port } = new URL(base)

// A deployed workflow: its stream, a Deployment's resource stream and its pods' log stream.
const created = await call(owner, 'POST', '/v1/api/workflows', { name: 'wire', cluster_id: 'sim' })
const workflowId = created.body.id as string
const saved = await call(owner, 'POST', `/v1/api/workflows/${workflowId}/save`, {
  nodes: [node('n-web', 'deployment', { name: 'web', namespace: 'wire', image: 'busybox:1.36', port: 8080, replicas: 1 })],
  edges: [] as ReturnType<typeof edge>[],
})
if (saved.status !== 200) throw new Error(`save: ${saved.status} ${JSON.stringify(saved.body)}`)
const ran = await call(owner, 'POST', `/v1/api/workflows/${workflowId}/run`, { trigger_data: TRIGGER })
if (ran.body?.status !== 'completed') throw new Error(`run: ${ran.status} ${JSON.stringify(ran.body)}`)
const resourceId = (await call(owner, 'GET', `/v1/api/resources?workflow_id=${workflowId}&kind=Deployment`)).body.resources[0].id as string

// A finished build (its stream replays the build's events and ends) and a live one, held while building.
const done = await f.start({ image_name: 'team/finished' })
await app.services.builds.finished(done.body.id)
const hold = f.sim.failingBuilds.hold('team/live', 'build')
t.teardown(() => hold.release())
const live = await f.start({ image_name: 'team/live' })
await hold.reached

// A finished import (analysed for real) and a live one (a session still analysing).
const analysed = await call(owner, 'POST', '/v1/api/import/analyze', { source: 'compose', content: 'services:\n  web:\n    image: nginx:1.27\n' })
if (analysed.status >= 300) throw new Error(`import: ${analysed.status} ${JSON.stringify(analysed.body)}`)
const importDone = analysed.body.id as string
await waitFor('the import to finish', async () => ['completed', 'failed'].includes((await call(owner, 'GET', `/v1/api/import/${importDone}`)).body.status))
const importLive = newId()
const now = new Date()
await app.db.collection('import_sessions').insertOne({
  _id: importLive as never, owner_id: owner.user.id, source: 'compose', status: 'analyzing', progress: 10, message: 'analysing', error: null,
  analysis: null, filename: null, url: null, branch: null, path: null, commit: null, logs: [], created_at: now, updated_at: now, finished_at: null,
  expires_at: new Date(now.getTime() + 3_600_000), instance_id: 'elsewhere', heartbeat_at: now,
})

// A notification to replay.
app.bus.emit('cluster.status', { owner_id: owner.user.id, cluster_id: 'sim', name: 'sim', from: 'connected', to: 'error', message: 'sim refused' })
await app.services.notifications.idle()

const streams: Record<string, { path: string; ends?: boolean }> = {
  workflow: { path: `/workflows/${workflowId}/status/stream` },
  resource: { path: `/resources/${resourceId}/stream` },
  'pod log': { path: `/resources/${resourceId}/logs/stream?follow=true&tail=5` },
  notification: { path: '/notifications/stream' },
  'finished build': { path: `/builds/${done.body.id}/stream`, ends: true },
  'live build': { path: `/builds/${live.body.id}/stream` },
  'finished import': { path: `/import/${importDone}/stream`, ends: true },
  'live import': { path: `/import/${importLive}/stream` },
}
const adapterPath = (path: string) => path.replace('/notifications/stream', '/user-notifications/stream')

/**
 * One stream over a raw socket, resuming from the first event (so finished streams replay): everything up to
 * the end of the first event frame (or the end of the reply when it ends by itself), then the socket closes.
 */
function rawOpen(path: string, ends: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) })
    let text = ''
    socket.setEncoding('latin1')
    const finish = () => { socket.destroy(); resolve(text) }
    socket.on('data', (chunk: string) => {
      text += chunk
      const body = text.indexOf('\r\n\r\n')
      // Anything before the head's end that is a frame counts as well: the check is on the first bytes.
      if (!ends && (body >= 0 ? text.slice(body + 4) : text).includes('\n\n')) finish()
    })
    socket.on('end', finish)
    socket.on('error', reject)
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.token}\r\nAccept: text/event-stream\r\nLast-Event-ID: 0\r\n\r\n`)
  })
}

for (const [prefix, pathOf] of [['/v1/api', (p: string) => p], ['/kubeorch/v1/api', adapterPath]] as const) {
  t.test(`${prefix}: the status line comes first on every stream kind (${CONNECTIONS} connections each)`, async (t) => {
    for (const [kind, { path, ends }] of Object.entries(streams)) {
      let before = 0
      let other = ''
      for (let i = 0; i < CONNECTIONS; i++) {
        const text = await rawOpen(`${prefix}${pathOf(path)}`, ends === true)
        if (!text.startsWith('HTTP/1.1 ')) before++
        else if (!text.startsWith('HTTP/1.1 200 ')) other ||= text.slice(0, 200)
      }
      t.equal(before, 0, `${kind}: no frame before the status line in ${CONNECTIONS} connections`)
      t.equal(other, '', `${kind}: every answer is 200`)
    }
  })

  t.test(`${prefix}: fetch reads every stream kind (it rejects a reply that does not start with a status line)`, async (t) => {
    for (const [kind, { path, ends }] of Object.entries(streams)) {
      for (let i = 0; i < 10; i++) {
        const ac = new AbortController()
        const res = await fetch(`${base}${prefix}${pathOf(path)}`, { headers: { authorization: `Bearer ${owner.token}`, 'last-event-id': '0' }, signal: ac.signal })
        t.equal(res.status, 200, `${kind}: 200`)
        t.equal(res.headers.get('content-type'), 'text/event-stream')
        const reader = res.body!.getReader()
        const { value } = await reader.read()
        t.match(Buffer.from(value!).toString('utf8'), /^(retry: \d+\n|: |id: |event: )/, `${kind}: the body starts with a frame`)
        if (ends) { while (!(await reader.read()).done) { /* to its end */ } } else ac.abort()
        await reader.cancel().catch(() => undefined)
      }
    }
  })
}
