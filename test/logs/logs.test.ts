// Pod log streams against the simulator: the tail then `complete`, following new lines, one upstream request
// shared by two clients and stopped when the last leaves, a workload's pod picked by `pod`, owner scoping,
// viewer access, an unknown container, cut long lines, and a cluster failing the log request.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import type { TestUser } from '../helpers/auth.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { podWorld } from '../helpers/pod-world.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { LineSplitter, parseLine } from '../../src/kube/pod-logs.ts'
import { Value } from 'typebox/value'
import type { TSchema } from 'typebox'
import { podLogsStreamDoc } from '../../schemas/pod-streams.ts'

const sim = await startTestCluster(t, { timing: { logIntervalMs: 50 } })
const { app, logs: appLogs } = await startTestApp(t, { CLUSTER_TIMEOUT_MS: 5000, LOG_LINE_MAX_BYTES: 1024 })
const address = await app.listen({ port: 0, host: '127.0.0.1' })
const { alice, bob, carol, call, cluster, create, track: trackIn } = await podWorld(app, sim, 'logs')
const LONG = 'x'.repeat(3000)
const deployment = (name: string, replicas: number, lines: string[]) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: {
    replicas, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name }, annotations: { 'kube-sim.io/logs': lines.join('\n') } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }, { name: 'side', image: 'busybox:1.36' }] } },
  },
})
await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'logs' } })
await create('/apis/apps/v1/namespaces/logs/deployments', deployment('web', 1, ['alpha', 'beta', 'gamma', LONG]))
await create('/apis/apps/v1/namespaces/logs/deployments', deployment('multi', 2, ['one']))
sim.failingImages.crashLoop('registry.example/crashy')
await create('/apis/apps/v1/namespaces/logs/deployments', {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'crashy' },
  spec: { replicas: 1, selector: { matchLabels: { app: 'crashy' } }, template: { metadata: { labels: { app: 'crashy' } }, spec: { containers: [{ name: 'app', image: 'registry.example/crashy:1' }] } } },
})
await waitFor('deployments ready', async () => {
  const [a, b] = await Promise.all([raw(sim, 'GET', '/apis/apps/v1/namespaces/logs/deployments/web'), raw(sim, 'GET', '/apis/apps/v1/namespaces/logs/deployments/multi')])
  return a.json?.status?.readyReplicas === 1 && b.json?.status?.readyReplicas === 2
})

const track = (u: TestUser, name: string) => trackIn(u, name, 'logs')
const webId = await track(alice, 'web')
const multiId = await track(alice, 'multi')
const carolsWebId = await track(carol, 'web')
const crashyId = await track(alice, 'crashy')

/** Events whose payload does not match the schema documented for its type (x-events). */
const undocumented: unknown[] = []
let eventsSeen = 0
interface Event { id: number; type: string; data: any } // eslint-disable-line @typescript-eslint/no-explicit-any

/** An SSE reader over a real connection: the events so far, whether the response ended, and a way to leave. */
async function open(u: TestUser, id: string, query = '') {
  const ac = new AbortController()
  const res = await fetch(`${address}/v1/api/resources/${id}/logs/stream${query ? `?${query}` : ''}`, { headers: u.headers, signal: ac.signal })
  const events: Event[] = []
  let ended = false
  const done = (async () => {
    if (res.status !== 200) return
    const decoder = new TextDecoder()
    let buf = ''
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true })
        let i: number
        while ((i = buf.indexOf('\n\n')) !== -1) {
          const block = buf.slice(0, i)
          buf = buf.slice(i + 2)
          const field = (name: string) => block.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2)
          const type = field('event')
          if (!type) continue
          const event = { id: Number(field('id')), type, data: JSON.parse(field('data') ?? 'null') }
          const doc = (podLogsStreamDoc.events as Record<string, { schema: TSchema } | undefined>)[type]
          eventsSeen++
          if (!doc || !Value.Check(doc.schema, event.data)) undocumented.push(event)
          events.push(event)
        }
      }
    } catch { /* aborted by the test */ }
    ended = true
  })()
  return {
    status: res.status, headers: res.headers, events, done,
    body: (res.status === 200 ? undefined : await res.json()) as any, // eslint-disable-line @typescript-eslint/no-explicit-any
    get ended() { return ended },
    lines: () => events.filter((e) => e.type === 'log').map((e) => e.data.line as string),
    leave: () => ac.abort(),
  }
}

t.test('follow=false: metadata, the last N lines, then complete, and the response ends', async (t) => {
  const s = await open(alice, webId, 'follow=false&tail=2')
  t.equal(s.status, 200)
  t.match(s.headers.get('content-type'), /text\/event-stream/)
  await s.done
  t.same(s.events.map((e) => e.type), ['metadata', 'log', 'log', 'complete'])
  t.match(s.events[0].data, { pod: /^web-/, container: 'web', namespace: 'logs', cluster: 'logs' })
  for (const e of s.events.filter((x) => x.type === 'log')) t.ok(Date.parse(e.data.timestamp), 'each line carries the kubelet\'s time')
  const all = await open(alice, webId, 'follow=false&tail=5000')
  await all.done
  t.same(all.lines().slice(0, 3), ['alpha', 'beta', 'gamma'], 'the whole log from its first line')
  const long = all.lines()[3]
  t.ok(Buffer.byteLength(long) < 1100 && long.startsWith('xxxx') && long.endsWith('…[line truncated]'), 'a line longer than LOG_LINE_MAX_BYTES is cut and marked')
  t.match(all.lines()[4], /heartbeat 1$/, 'the line after the long one is intact')
  t.equal(app.podLogs.active(), 0, 'a one-shot upstream is gone once it completed')
})

t.test('timestamps=true keeps the time in front of each line; a chosen container', async (t) => {
  const s = await open(alice, webId, 'follow=false&tail=5000&timestamps=true&container=side')
  await s.done
  t.equal(s.events[0].data.container, 'side')
  const first = s.events.find((e) => e.type === 'log')!
  t.match(first.data.line, /^\d{4}-\d\d-\d\dT[\d:.]+Z alpha$/)
})

t.test('follow: new lines arrive; two clients share one upstream, stopped when the last one leaves', async (t) => {
  const before = { ...app.podLogs.stats }
  const a = await open(alice, webId, 'tail=1')
  await waitFor('a: metadata and the tail', () => a.lines().length >= 1)
  const seen = a.lines().length
  await waitFor('a: new lines', () => a.lines().length >= seen + 3)
  t.match(a.lines().at(-1), /heartbeat \d+$/)
  const b = await open(alice, webId, 'tail=1')
  await waitFor('b: a line', () => b.lines().length >= 1)
  t.equal(app.podLogs.stats.started - before.started, 1, 'one upstream request for both clients')
  t.equal(app.podLogs.active(), 1)

  // A client joining the running upstream starts with its recent lines (up to its tail), not only new ones.
  const key = app.podLogs.keyFor({ cluster: { id: cluster.id, name: 'logs' }, namespace: 'logs', pod: a.events[0].data.pod, container: 'web' }, { tail: 1, follow: true, timestamps: false })
  const probe = app.streams.subscribe(key)
  const latest = probe.since
  probe.close()
  const joined = app.podLogs.hub.subscribe(key)
  const first = await joined[Symbol.asyncIterator]().next()
  joined.close()
  t.match(first.value, { id: latest, type: 'log' }, 'the latest line, replayed at once')
  const next = await waitFor('a line both receive after b joined', () => b.lines().slice(1).find((l) => /heartbeat/.test(l)))
  await waitFor('a has it too', () => a.lines().includes(next))
  a.leave()
  await a.done
  t.equal(app.podLogs.active(), 1, 'still open for b')
  const bCount = b.lines().length
  await waitFor('b keeps getting lines', () => b.lines().length >= bCount + 2)
  b.leave()
  await b.done
  await waitFor('the upstream stopped when the last client left', () => app.podLogs.active() === 0)
  t.equal(app.podLogs.stats.stopped - before.stopped, 1)
  t.notOk(b.events.some((e) => e.type === 'error'), 'no error on either')
})

t.test('following a container that stops: its last lines, then complete', async (t) => {
  await waitFor('crashy has crashed once', async () => (await raw(sim, 'GET', '/api/v1/namespaces/logs/pods?labelSelector=app%3Dcrashy')).json?.items?.[0]?.status?.containerStatuses?.[0]?.restartCount >= 1)
  const s = await open(alice, crashyId, 'tail=5')
  await s.done
  t.equal(s.events.at(-1)?.type, 'complete')
  t.notOk(s.events.some((e) => e.type === 'error'))
  t.match(s.lines().at(-1), /exited with code 1/)
  await waitFor('upstream gone', () => app.podLogs.active() === 0)
})

t.test('a workload\'s pod picked by `pod`; a pod that is not its own is 404', async (t) => {
  const pods = (await call(alice, 'GET', `/v1/api/resources/${multiId}/pods`)).body.pods as Array<{ name: string }>
  t.equal(pods.length, 2)
  for (const p of pods) {
    const s = await open(alice, multiId, `follow=false&pod=${p.name}`)
    await s.done
    t.equal(s.events[0].data.pod, p.name)
    t.equal(s.events.at(-1)?.type, 'complete')
  }
  const other = await open(alice, multiId, 'pod=web-123')
  t.equal(other.status, 404)
  t.match(other.body.error, /is not one of Deployment "multi"'s pods/)
})

t.test('another user\'s resource (or a missing one) is 404 before any stream', async (t) => {
  for (const id of [webId, '0123456789abcdef01234567']) {
    const s = await open(bob, id)
    t.equal(s.status, 404)
    t.same(s.body, { error: 'resource not found' })
  }
  t.equal(app.podLogs.active(), 0)
})

t.test('viewer access to the cluster suffices for logs', async (t) => {
  const s = await open(carol, carolsWebId, 'follow=false&tail=3')
  t.equal(s.status, 200)
  await s.done
  t.same(s.events.map((e) => e.type), ['metadata', 'log', 'log', 'log', 'complete'])
})

t.test('an unknown container is an error event, then complete', async (t) => {
  const s = await open(alice, webId, 'container=nope')
  await s.done
  t.same(s.events.map((e) => e.type), ['metadata', 'error', 'complete'])
  t.equal(s.events[1].data.error, 'container "nope" is not in pod "' + s.events[0].data.pod + '"; its containers: web, side')
  t.equal(app.podLogs.active(), 0, 'no upstream was started')
})

t.test('the cluster failing the log request: error event, then complete', async (t) => {
  t.teardown(() => sim.faults.reset())
  const pod = (await call(alice, 'GET', `/v1/api/resources/${webId}/pods`)).body.pods[0].name
  sim.faults.failNext(1, 500, { pathPrefix: `/api/v1/namespaces/logs/pods/${pod}/log` })
  const s = await open(alice, webId)
  await s.done
  t.same(s.events.map((e) => e.type), ['metadata', 'error', 'complete'])
  t.equal(s.events[1].data.error, 'the cluster answered 500 to the log request')
  await waitFor('upstream gone', () => app.podLogs.active() === 0)
})

t.test('bad query values are 400', async (t) => {
  for (const q of ['tail=5001', 'tail=-1', 'since_seconds=0', 'follow=maybe', 'colour=red']) {
    const s = await open(alice, webId, q)
    t.equal(s.status, 400, q)
  }
})

t.test('nothing about the stream leaks a token into the log', async (t) => {
  const joined = appLogs.join('')
  for (const u of [alice, bob, carol]) t.notOk(joined.includes(u.token))
})

t.test('every event of every stream above had a documented type and payload', async (t) => {
  t.ok(eventsSeen > 50, `${eventsSeen} events`)
  t.same(undocumented, [])
})

t.test('line splitting and parsing', async (t) => {
  const out: string[] = []
  const s = new LineSplitter(8, (l) => out.push(l))
  s.write(Buffer.from('ab\r\ncd'))
  s.write(Buffer.from('e\n0123456789abc'))
  s.write(Buffer.from('def\nok\n'))
  const euro = Buffer.from('€\n')
  s.write(euro.subarray(0, 1))
  s.write(euro.subarray(1))
  s.write(Buffer.from('tail'))
  s.end()
  t.same(out, ['ab', 'cde', '01234567 …[line truncated]', 'ok', '€', 'tail'])
  t.same(parseLine('2026-11-23T10:00:00.123456789Z hello world', false), { line: 'hello world', timestamp: '2026-11-23T10:00:00.123Z' })
  t.same(parseLine('2026-11-23T10:00:00Z hi', true), { line: '2026-11-23T10:00:00Z hi', timestamp: '2026-11-23T10:00:00.000Z' })
  t.same(parseLine('no stamp', false), { line: 'no stamp', timestamp: null })
})

// Last: it closes the app.
t.test('shutdown ends open log streams and stops their upstream requests', async (t) => {
  const follow = await open(alice, webId, 'tail=1')
  const once = await open(alice, webId, 'tail=5000&follow=false')
  await waitFor('following', () => follow.lines().length >= 1 && app.podLogs.active() >= 1)
  const started = Date.now()
  await app.close()
  await Promise.all([follow.done, once.done])
  t.ok(Date.now() - started < 5000, 'within the shutdown, not after a grace period')
  t.equal(app.podLogs.active(), 0)
})
