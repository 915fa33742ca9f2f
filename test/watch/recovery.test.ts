// Recovery follows the outage, not the backoff. With the spec's backoff alone, a watch dropped by a long
// outage waited up to the cap (60 s) after the cluster was back. Here, while streams wait in backoff, one
// probe per cluster asks the cluster whether it answers; when it answers again, every waiting stream
// reconnects at once. The backoff keeps growing while the cluster stays down, and a cluster that answers
// but fails the watch itself keeps its backoff. Scaled down: backoff 100 ms → 6.4 s, probe every 50 ms.
import t from 'tap'
import { performance } from 'node:perf_hooks'
import { KubeConfig } from '@kubernetes/client-node'
import { startKubeSim } from '../kube-sim/index.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { watchFixture, deployment, configmap, type StatusEvent } from './fixture.ts'
import { WatchHub, type ReconnectInfo, type ProbeInfo, type StreamKey, type WatchEventType } from '../../src/kube/watch-hub.ts'
import { backoffDelay } from '../../src/kube/watch-backoff.ts'
import type { KubeObject } from '../../src/manifests/types.ts'

const BASE = 100
const MAX = 6400
const PROBE = 50
const LABEL = 'recovery-test=yes'
/** The spec's delays for attempts 1..n without jitter (random 0.5): 113, 200, 400, 800, 1600, 3200 ms. */
const steps = (n: number) => Array.from({ length: n }, (_, i) => backoffDelay(i, { baseMs: BASE, maxMs: MAX }, () => 0.5))

// Pods start 500 ms after creation: created just before the outage, they turn Running during it.
const sim = await startKubeSim({ timing: { podStartMs: 500, podReadyMs: 60_000 } })
t.teardown(() => sim.close())
const kc = new KubeConfig()
kc.loadFromString(sim.kubeconfigYaml())

for (const ns of ['rec-a', 'rec-b']) {
  const r = await raw(sim, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })
  if (r.status >= 300) throw new Error(`namespace ${ns}: ${r.status}`)
}

interface Seen { key: StreamKey; type: WatchEventType; object: KubeObject; at: number }

/** A hub on the simulator (every cluster key reaches it), recording what it reports. */
function hubOn(probeIntervalMs: number) {
  const reconnects: Array<ReconnectInfo & { at: number }> = []
  const probes: Array<ProbeInfo & { end: number }> = []
  const events: Seen[] = []
  const hub = new WatchHub({
    labelSelector: LABEL,
    backoff: { baseMs: BASE, maxMs: MAX },
    // No jitter: the delays are the spec's steps exactly, so their growth can be asserted step by step.
    random: () => 0.5,
    connect: async () => kc,
    probeIntervalMs,
    onReconnect: (info) => { reconnects.push({ ...info, at: performance.now() }) },
    onProbe: (info) => { probes.push({ ...info, end: performance.now() }) },
  })
  const follow = (key: StreamKey) => hub.subscribe(key, { name: '*', event: (type, object) => { events.push({ key, type, object, at: performance.now() }) } })
  /** Resolves with the first event (from `from` on) that matches, or fails after `ms`. */
  const next = (what: string, match: (e: Seen) => boolean, from = events.length, ms = 5000) =>
    waitFor(what, () => events.slice(from).find(match), ms, 5)
  return { hub, reconnects, probes, events, follow, next }
}

const pods = (cluster: string, namespace: string): StreamKey => ({ cluster, apiVersion: 'v1', kind: 'Pod', namespace })
const configMaps = (cluster: string, namespace: string): StreamKey => ({ cluster, apiVersion: 'v1', kind: 'ConfigMap', namespace })

async function createPod(ns: string, name: string) {
  const r = await raw(sim, 'POST', `/api/v1/namespaces/${ns}/pods`, {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { 'recovery-test': 'yes' } }, spec: { containers: [{ name: 'app', image: 'ghcr.io/acme/app:1' }] } },
  })
  if (r.status >= 300) throw new Error(`pod ${name}: ${r.status} ${r.text}`)
}

/** Stops the simulator and waits until the pod stream has backed off `attempts` times in a row. */
async function outage(h: ReturnType<typeof hubOn>, attempts: number) {
  const from = h.reconnects.length
  await sim.faults.stop()
  const started = performance.now()
  await waitFor(`${attempts} failed reconnects`, () => h.reconnects.slice(from).find((r) => r.kind === 'Pod' && r.cluster === 'a' && r.attempt === attempts), 10_000, 5)
  return { from, started }
}

t.test('a long outage: the backoff grows while down, and the streams are back within a probe interval of the cluster answering', async (t) => {
  const h = hubOn(PROBE)
  t.teardown(() => h.hub.close())
  // Cluster "a": three streams; cluster "b": one. Both keys reach the same simulator.
  const offs = [h.follow(pods('a', 'rec-a')), h.follow(configMaps('a', 'rec-a')), h.follow(configMaps('a', 'rec-b')), h.follow(configMaps('b', 'rec-a'))]
  t.teardown(() => offs.forEach((off) => off()))
  await waitFor('four watches open', () => h.hub.openWatches() === 4 && sim.openWatches() === 4)

  const fromCreate = h.events.length
  await createPod('rec-a', 'web')
  const added = await h.next('web ADDED', (e) => e.type === 'ADDED' && e.object.metadata.name === 'web', fromCreate)
  t.not((added.object as any).status?.phase, 'Running', 'seen before it started')

  const { from, started } = await outage(h, 6)
  const probesBefore = h.probes.filter((p) => p.end >= started)
  const seenDuringOutage = h.events.length
  const podDelays = h.reconnects.slice(from).filter((r) => r.kind === 'Pod' && r.cluster === 'a')
  t.same(podDelays.map((r) => r.attempt), [1, 2, 3, 4, 5, 6], 'consecutive failures counted, none reset while down')
  t.same(podDelays.map((r) => r.delayMs), steps(6), 'the backoff keeps growing while the cluster is down')
  t.equal(podDelays[0].reason, 'watch: the server closed the watch')
  t.equal(podDelays[1].reason, 'watch: cannot reach the cluster: connection refused', 'the reason whole, without the request URL')
  t.ok(probesBefore.length >= 3, `${probesBefore.length} probes while down`)
  t.ok(probesBefore.every((p) => !p.answered && p.woke === 0), 'no probe answered or woke a stream while the cluster was down')
  // The other streams failed in the same instant; their reports may trail the pod stream's by a moment.
  t.ok(await waitFor('all three streams of cluster a waiting', () => h.hub.waitingStreams('a') === 3, 1000, 2), 'every stream of cluster a waits in backoff')

  await sim.faults.restart()
  const back = performance.now()
  // Changed during the outage (Pending → Running at 500 ms): the resumed watch delivers it.
  const running = await h.next('web Running after the outage', (e) => e.object.metadata.name === 'web' && (e.object as any).status?.phase === 'Running', seenDuringOutage)
  const ms = running.at - back
  const pending = podDelays[podDelays.length - 1].delayMs
  t.ok(running.at > back, 'delivered after the cluster was back, not during the outage')
  t.equal(running.type, 'MODIFIED')
  // A probe interval, then two TLS requests (the probe, the watch): a loaded 2-core machine needs a margin.
  t.ok(ms < PROBE + 1000, `back ${ms.toFixed(0)} ms after the cluster answered (probe every ${PROBE} ms; the backoff had ${pending} ms to wait)`)
  t.ok(ms < pending / 2, 'well before the backoff would have retried')
  const woke = h.probes.filter((p) => p.end >= back && p.woke > 0)
  t.ok(woke.length >= 1, `a probe woke the streams ${woke.length ? `${(woke[0].end - back).toFixed(0)} ms after the cluster answered (the probe took ${woke[0].ms.toFixed(0)} ms)` : ''}`)
  await waitFor('every watch open again', () => h.hub.openWatches() === 4 && sim.openWatches() === 4, 5000, 5)

  // One probe per cluster: cluster a (three streams) is probed about as often as cluster b (one stream), and
  // a cluster's probes never overlap.
  const during = h.probes.filter((p) => p.end >= started && p.end <= back)
  const count = (c: string) => during.filter((p) => p.cluster === c).length
  const outageMs = back - started
  t.ok(Math.abs(count('a') - count('b')) <= 2, `probes during ${outageMs.toFixed(0)} ms of outage: cluster a ${count('a')}, cluster b ${count('b')}`)
  t.ok(count('a') <= outageMs / PROBE + 2, `at most one probe per interval for cluster a (${count('a')})`)
  for (const c of ['a', 'b']) {
    const mine = h.probes.filter((p) => p.cluster === c)
    const overlaps = mine.filter((p, i) => i > 0 && p.end - p.ms < mine[i - 1].end)
    t.equal(overlaps.length, 0, `cluster ${c}: one probe at a time`)
  }

  // Back and healthy: nothing waits, so the probes stop.
  await waitFor('probes stopped', () => h.hub.probes.probing().length === 0, 2000, 5)
  t.equal(h.hub.waitingStreams('a') + h.hub.waitingStreams('b'), 0)
  const after = h.probes.length
  // A further change is delivered by the open watch, and no probe ran meanwhile.
  const fromCm = h.events.length
  const r = await raw(sim, 'POST', '/api/v1/namespaces/rec-b/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after', labels: { 'recovery-test': 'yes' } }, data: { A: '1' } } })
  t.equal(r.status, 201)
  await h.next('configmap after ADDED', (e) => e.object.metadata.name === 'after', fromCm)
  t.equal(h.probes.length, after, 'no probe once every stream is back')
})

t.test('a cluster that answers but fails the watch itself keeps its backoff (the probe does not turn it into a busy loop)', async (t) => {
  const h = hubOn(PROBE)
  t.teardown(() => h.hub.close())
  const off = h.follow(configMaps('a', 'rec-b'))
  t.teardown(off)
  await waitFor('watch open', () => h.hub.openWatches() === 1)
  const from = h.reconnects.length
  sim.faults.failNext(4, 500, { pathPrefix: '/api/v1/namespaces/rec-b/configmaps', method: 'GET' })
  sim.faults.dropWatches()
  await waitFor('back after four failures', () => h.reconnects.length - from >= 5 && h.hub.openWatches() === 1, 10_000, 5)
  const mine = h.reconnects.slice(from)
  t.same(mine.map((r) => r.attempt), [1, 2, 3, 4, 5], 'each failure counted')
  t.same(mine.map((r) => r.delayMs), steps(5), 'each waited its full backoff')
  t.match(mine[1].reason, /^watch: HTTP 500 Internal Server Error/, 'the reason names the status')
  t.ok(h.probes.length >= 1, 'the cluster was probed while the stream waited')
  t.ok(h.probes.every((p) => p.answered && p.woke === 0), 'it answered every probe, and no probe woke the stream')
})

t.test('clusterAnswered (the health check succeeded) reconnects the waiting streams at once, probes off', async (t) => {
  const h = hubOn(0)
  t.teardown(() => h.hub.close())
  const offs = [h.follow(pods('a', 'rec-a')), h.follow(configMaps('a', 'rec-a'))]
  t.teardown(() => offs.forEach((off) => off()))
  await waitFor('two watches open', () => h.hub.openWatches() === 2)
  const fromCreate = h.events.length
  await createPod('rec-a', 'api')
  await h.next('api ADDED', (e) => e.type === 'ADDED' && e.object.metadata.name === 'api', fromCreate)
  const { from } = await outage(h, 5)
  const seenDuringOutage = h.events.length
  t.equal(h.hub.probes.probing().length, 0, 'probing is off')
  // The two streams failed in the same instant, but the ConfigMap stream's report may trail the pod stream's.
  t.ok(await waitFor('both streams of cluster a waiting', () => h.hub.waitingStreams('a') === 2, 1000, 2), 'both streams wait in backoff')
  await sim.faults.restart()
  const back = performance.now()
  // A backoff timer may have fired while the simulator restarted (a loaded machine): count what waits now,
  // in the same tick as the call, so the call's answer is exact.
  const waiting = h.hub.waitingStreams('a')
  t.equal(h.hub.clusterAnswered('b'), 0, 'another cluster\'s streams are not touched')
  t.equal(h.hub.clusterAnswered('a'), waiting, `every waiting stream reconnects (${waiting} of 2)`)
  t.equal(h.hub.waitingStreams('a'), 0, 'none waits after the call')
  const running = await h.next('api Running', (e) => e.object.metadata.name === 'api' && (e.object as any).status?.phase === 'Running', seenDuringOutage)
  const pending = h.reconnects.slice(from).filter((r) => r.kind === 'Pod').pop()!.delayMs
  t.ok(running.at - back < pending / 2, `back ${(running.at - back).toFixed(0)} ms after the call (the backoff had ${pending} ms to wait)`)
  await waitFor('both open', () => h.hub.openWatches() === 2, 5000, 5)
  t.equal(h.hub.clusterAnswered('a'), 0, 'nothing waits any more')
})

t.test('closing the hub stops its probes and its waiting streams', async (t) => {
  const h = hubOn(PROBE)
  h.follow(configMaps('a', 'rec-a'))
  await waitFor('watch open', () => h.hub.openWatches() === 1)
  sim.faults.failNext(1000, 503, { pathPrefix: '/api/v1/namespaces/rec-a/configmaps', method: 'GET' })
  sim.faults.dropWatches()
  await waitFor('waiting and probing', () => h.hub.waitingStreams('a') === 1 && h.hub.probes.probing().length === 1, 5000, 5)
  h.hub.close()
  t.equal(h.hub.probes.probing().length, 0, 'no cluster probed')
  t.equal(h.hub.streamCount(), 0)
  t.equal(h.hub.waitingStreams('a'), 0, 'no reconnect timer left')
  sim.faults.reset()
})

/** Each resource's events continue from the one before and each says something new (status, counters or message). */
function continuity(events: StatusEvent[]): string | null {
  const last = new Map<string, StatusEvent>()
  for (const e of events) {
    const prev = last.get(e.resource_id)
    last.set(e.resource_id, e)
    if (!prev) continue
    if (e.old_status !== prev.new_status) return `${e.name}: starts at ${e.old_status}, the previous ended at ${prev.new_status}`
    if (prev.new_status === e.new_status && prev.message === e.message && JSON.stringify(prev.counters) === JSON.stringify(e.counters)) return `${e.name}: ${e.new_status} (${e.message}) published twice`
  }
  return null
}

t.test('a gap in the watches: every status that changed meanwhile is published when the cluster answers (resumed from history, then relisted after compaction)', async (t) => {
  const f = await watchFixture(t, { WATCH_BACKOFF_BASE_MS: 200, WATCH_BACKOFF_MAX_MS: 1600 })
  const NS = 'gap'
  const D = `/apis/apps/v1/namespaces/${NS}/deployments`
  const C = `/api/v1/namespaces/${NS}/configmaps`
  const watch = f.app.services.resourceWatch
  const wf = await f.workflow({
    nodes: [deployment('n-a', 'alpha', NS, 'ghcr.io/acme/a:1'), deployment('n-b', 'beta', NS, 'ghcr.io/acme/b:1'), configmap('n-g', 'gamma', NS), configmap('n-d', 'delta', NS)],
    edges: [],
  }, 'gap')
  await f.deploy(wf)
  for (const name of ['alpha', 'beta']) await f.status(`${name} running`, (e) => e.name === name && e.new_status === 'running')
  await waitFor('every stream open', () => watch.hub.streamCount() > 0 && watch.hub.openWatches() === watch.hub.streamCount())
  await watch.idle()

  /** Every request the watches make fails with 503 (and /version with it), as a cluster behind a load balancer that lost its API servers. */
  const unanswered = () => {
    for (const pathPrefix of [`/apis/apps/v1/namespaces/${NS}/`, '/api/v1/namespaces', '/version']) f.sim.faults.failNext(1_000_000, 503, { pathPrefix, method: 'GET' })
    f.sim.faults.dropWatches()
  }
  /** Reads through paths the injected failures do not cover (cluster-wide lists). */
  const deployments = async () => (await raw(f.sim, 'GET', '/apis/apps/v1/deployments')).json.items.filter((d: any) => d.metadata.namespace === NS)
  const configMapNames = async () => (await raw(f.sim, 'GET', '/api/v1/configmaps')).json.items.filter((c: any) => c.metadata.namespace === NS).map((c: any) => c.metadata.name)
  const since = (from: number, name: string) => f.statuses.slice(from).filter((e) => e.name === name)

  await t.test('resumed from the last resourceVersion (history kept)', async (t) => {
    unanswered()
    await waitFor('the watches back off', () => watch.hub.openWatches() === 0)
    const from = f.statuses.length
    await f.patch(`${D}/alpha`, { spec: { replicas: 2 } })
    await f.remove(`${C}/gamma`)
    await waitFor('alpha 2/2 in the cluster', async () => (await deployments()).find((d: any) => d.metadata.name === 'alpha')?.status?.readyReplicas === 2)
    t.notOk((await configMapNames()).includes('gamma'), 'gamma gone from the cluster')
    t.equal(watch.hub.openWatches(), 0, 'no watch got through during the gap')
    t.equal(f.statuses.length, from, 'nothing was published during the gap')
    f.sim.faults.reset()
    const alpha = await f.status('alpha 2/2 after the gap', (e) => f.statuses.indexOf(e) >= from && e.name === 'alpha' && e.counters.readyReplicas === 2 && e.new_status === 'running')
    const gamma = await f.status('gamma deleted after the gap', (e) => f.statuses.indexOf(e) >= from && e.name === 'gamma' && e.new_status === 'deleted')
    t.equal(gamma.old_status, 'running')
    await watch.idle()
    t.equal((await f.record('Deployment', 'alpha', NS)).ready, '2/2', 'stored')
    t.equal((await f.record('ConfigMap', 'gamma', NS)).status, 'deleted', 'stored')
    t.equal(since(from, 'alpha').filter((e) => e.counters.readyReplicas === 2).length, 1, `alpha 2/2 published once (${alpha.message})`)
    t.equal(since(from, 'beta').length, 0, 'beta did not change: nothing published for it')
    await waitFor('every stream open again', () => watch.hub.openWatches() === watch.hub.streamCount())
  })

  await t.test('history compacted during the gap: 410, relist, and the diff publishes every change', async (t) => {
    unanswered()
    await waitFor('the watches back off', () => watch.hub.openWatches() === 0)
    const from = f.statuses.length
    await f.patch(`${D}/alpha`, { spec: { replicas: 1 } })
    await f.remove(`${D}/beta`)
    await f.remove(`${C}/delta`)
    await waitFor('alpha 1/1 and beta gone in the cluster', async () => {
      const list = await deployments()
      return list.find((d: any) => d.metadata.name === 'alpha')?.status?.readyReplicas === 1 && !list.some((d: any) => d.metadata.name === 'beta')
    })
    f.sim.faults.compactHistory()
    t.equal(f.statuses.length, from, 'nothing was published during the gap')
    f.sim.faults.reset()
    await f.status('alpha 1/1 after the gap', (e) => f.statuses.indexOf(e) >= from && e.name === 'alpha' && e.counters.readyReplicas === 1 && e.counters.replicas === 1 && e.new_status === 'running')
    const beta = await f.status('beta deleted after the gap', (e) => f.statuses.indexOf(e) >= from && e.name === 'beta' && e.new_status === 'deleted')
    const delta = await f.status('delta deleted after the gap', (e) => f.statuses.indexOf(e) >= from && e.name === 'delta' && e.new_status === 'deleted')
    t.equal(beta.old_status, 'running')
    t.equal(delta.old_status, 'running')
    await watch.idle()
    t.equal((await f.record('Deployment', 'beta', NS)).status, 'deleted')
    t.equal((await f.record('ConfigMap', 'delta', NS)).status, 'deleted')
    // Deleted behind the service's back is also drift (API.md §12): once judged, the node shows `drifted` beside
    // the watchers' `deleted` (awaited: the check is asynchronous, so the bare state raced it).
    await f.app.services.drift.idle()
    t.match(await f.nodeStatus(wf, 'n-b'), { state: 'drifted', live_state: 'deleted' })
    t.equal(continuity(f.statuses), null, 'no change published twice, each continuing from the one before')
  })

  await t.test('the connection log names each drop whole', async (t) => {
    const logs = await f.app.db.collection('cluster_logs').find({ action: 'watch' }).toArray()
    t.ok(logs.length >= 1, `${logs.length} watch entries`)
    t.comment(logs.map((l) => l.message).join('\n'))
    for (const l of logs) {
      t.match(l.message, /^watch of \w+( in namespace [\w-]+)? dropped \((list|watch): [^()]*(\([^()]*\)[^()]*)*\); reconnecting in [\d.]+ (ms|s), attempt \d+/, l.message)
      t.notMatch(l.message, /https?:\/\/|…/, 'no URL, nothing cut')
    }
  })
})

t.test('watch failure reasons are whole sentences, and only a pathological one is cut, at a word', async (t) => {
  const { watchFailureReason, clipAtWord, WATCH_REASON_MAX } = await import('../../src/kube/watch-reason.ts')
  t.equal(watchFailureReason(null), 'the server closed the watch')
  const refused = Object.assign(new Error('request to https://10.0.0.1:6443/api/v1/namespaces/a/pods?watch=true&labelSelector=app.kubernetes.io%2Fmanaged-by%3Dx&resourceVersion=123456 failed, reason: connect ECONNREFUSED 10.0.0.1:6443'), { name: 'FetchError', type: 'system', code: 'ECONNREFUSED' })
  t.equal(watchFailureReason(refused), 'cannot reach the cluster: connection refused', 'a network failure by its code, without the request URL')
  t.equal(watchFailureReason(Object.assign(new Error('Service Unavailable'), { statusCode: 503 })), 'HTTP 503 Service Unavailable')
  const forbidden = 'pods is forbidden: User "system:serviceaccount:team-a:viewer" cannot list resource "pods" in API group "" in the namespace "payments": RBAC: clusterrole.rbac.authorization.k8s.io "view" not found'
  const apiException = Object.assign(new Error('HTTP-Code: 403\nMessage: Unknown API Status Code!\nBody: ...\nHeaders: {"audit-id":"x"}'), { code: 403, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: forbidden, reason: 'Forbidden', code: 403 }), headers: {} })
  t.equal(watchFailureReason(apiException), `HTTP 403 Forbidden: ${forbidden}`, 'the cluster\'s own Status message, whole (it is longer than the old 200-character cut)')
  t.equal(watchFailureReason(new Error('the cluster does not serve Widget (example.com/v1)')), 'the cluster does not serve Widget (example.com/v1)', 'this code\'s own words kept')
  t.equal(watchFailureReason(Object.assign(new Error('socket hang up at https://10.0.0.1/x?token=abc'), { code: 'ERR_SOMETHING_NEW' })), 'connection failed (ERR_SOMETHING_NEW)', 'unknown client text is never copied')
  t.equal(watchFailureReason(Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' })), 'the request timed out')

  t.equal(clipAtWord('short and whole', 50), 'short and whole')
  t.equal(clipAtWord('line one\n  line two', 50), 'line one line two', 'one line')
  const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ')
  const cut = clipAtWord(long, WATCH_REASON_MAX)
  t.ok(cut.length <= WATCH_REASON_MAX, `${cut.length} characters`)
  t.ok(cut.endsWith('…'), 'marked as cut')
  const words = cut.slice(0, -1).split(' ')
  t.ok(words.every((w, i) => w === `word${i}`), 'cut after a whole word')
  t.equal(clipAtWord('x'.repeat(600), 100).length, 100, 'a single endless token is cut at the limit')
})
