// REST semantics at the wire level: discovery, CRUD, optimistic concurrency, patch flavours,
// dry run, subresources, selectors, pagination, watch framing, deletion propagation, logs; fault
// injection; then the pure pieces underneath (patch, server-side apply bookkeeping, the watch history
// ring, selectors, cron, the exec shell).
import t from 'tap'
import { serverSideApply, trackUpdate } from './apply.ts'
import { nextAfter, parseSchedule } from './controllers/cron.ts'
import { fieldSetOf, fromFieldsV1, toFieldsV1 } from './fieldset.ts'
import { startKubeSim } from './index.ts'
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch.ts'
import { matchLabels, parseLabelSelector } from './selectors.ts'
import { ExitSignal, Shell } from './shell.ts'
import { Store } from './store.ts'
import { raw, rawStream, waitFor } from './test-helpers.ts'
import type { KObject } from './util.ts'

const sim = await startKubeSim({ watchHistory: 1000, timing: { logIntervalMs: 1000 } })
t.teardown(() => sim.close())
const CM = '/api/v1/namespaces/default/configmaps'

t.test('discovery, version, health and OpenAPI', async (t) => {
  const v = await raw(sim, 'GET', '/version', { token: null })
  t.match(v.json, { major: '1', minor: '32', gitVersion: /^v1\.32/ })
  for (const p of ['/healthz', '/livez', '/readyz']) t.equal((await raw(sim, 'GET', p, { token: null })).text, 'ok', `${p} is public`)
  for (const p of ['/version', '/healthz']) {
    const bad = await raw(sim, 'GET', p, { token: 'not-a-real-token' })
    t.equal(bad.status, 401, `${p} with an invalid token is 401: credentials are checked before public access`)
  }
  t.match((await raw(sim, 'GET', '/api')).json, { kind: 'APIVersions', versions: ['v1'] })
  const groups = (await raw(sim, 'GET', '/apis')).json.groups.map((g: { name: string }) => g.name)
  for (const g of ['apps', 'batch', 'networking.k8s.io', 'autoscaling', 'policy', 'apiextensions.k8s.io', 'metrics.k8s.io']) t.ok(groups.includes(g), `group ${g}`)
  const apps = (await raw(sim, 'GET', '/apis/apps/v1')).json
  t.match(apps.resources.find((r: { name: string }) => r.name === 'deployments'), { kind: 'Deployment', namespaced: true, shortNames: ['deploy'], verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] })
  t.ok(apps.resources.some((r: { name: string }) => r.name === 'deployments/scale'))
  const agg = await raw(sim, 'GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' })
  t.match(agg.headers['content-type'], /as=APIGroupDiscoveryList/)
  t.equal(agg.json.kind, 'APIGroupDiscoveryList')
  const root = (await raw(sim, 'GET', '/openapi/v3')).json
  t.ok(root.paths['apis/apps/v1'].serverRelativeURL.startsWith('/openapi/v3/apis/apps/v1?hash='))
  const doc = (await raw(sim, 'GET', root.paths['apis/apps/v1'].serverRelativeURL)).json
  const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch
  t.ok(patch.parameters.some((p: { name: string }) => p.name === 'fieldValidation'), 'advertises server-side field validation')
})

t.test('create, get, update with optimistic concurrency', async (t) => {
  const c = await raw(sim, 'POST', CM, { body: { metadata: { name: 'one', labels: { tier: 'a' } }, data: { k: 'v' } } })
  t.equal(c.status, 201)
  t.match(c.json.metadata, { uid: /^[0-9a-f-]{36}$/, resourceVersion: /^\d+$/, creationTimestamp: /Z$/ })
  t.equal((await raw(sim, 'POST', CM, { body: { metadata: { name: 'one' } } })).status, 409, 'AlreadyExists')
  const missingNs = await raw(sim, 'POST', '/api/v1/namespaces/nowhere/configmaps', { body: { metadata: { name: 'x' } } })
  t.equal(missingNs.status, 404)
  t.equal(missingNs.json.message, 'namespaces "nowhere" not found')
  const gen = await raw(sim, 'POST', CM, { body: { metadata: { generateName: 'gen-' } } })
  t.match(gen.json.metadata.name, /^gen-[a-z0-9]{5}$/)

  const stale = c.json
  const u1 = await raw(sim, 'PUT', `${CM}/one`, { body: { ...stale, data: { k: 'v2' } } })
  t.equal(u1.status, 200)
  t.ok(Number(u1.json.metadata.resourceVersion) > Number(stale.metadata.resourceVersion), 'resourceVersion increases')
  const u2 = await raw(sim, 'PUT', `${CM}/one`, { body: { ...stale, data: { k: 'v3' } } })
  t.equal(u2.status, 409, 'stale resourceVersion is a conflict')
  t.match(u2.json, { reason: 'Conflict', message: /the object has been modified/ })
  const nf = await raw(sim, 'GET', `${CM}/absent`)
  t.match(nf.json, { kind: 'Status', code: 404, reason: 'NotFound', message: 'configmaps "absent" not found', details: { name: 'absent', kind: 'configmaps' } })
  const bad = await raw(sim, 'POST', '/apis/apps/v1/namespaces/default/deployments', { body: { metadata: { name: 'bad' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'x', image: 'x' }] } } } } })
  t.equal(bad.status, 422)
  t.match(bad.json, { reason: 'Invalid', details: { causes: [{ field: 'spec.template.metadata.labels' }] } })
})

t.test('patch: JSON patch, merge patch, strategic merge by key', async (t) => {
  const D = '/apis/apps/v1/namespaces/default/deployments'
  const made = await raw(sim, 'POST', D, { body: { metadata: { name: 'p' }, spec: { replicas: 1, selector: { matchLabels: { app: 'p' } }, template: { metadata: { labels: { app: 'p' } }, spec: { containers: [
    { name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }], ports: [{ containerPort: 80 }] },
    { name: 'b', image: 'b:1' },
  ] } } } } })
  t.equal(made.json.metadata.generation, 1)
  const smp = await raw(sim, 'PATCH', `${D}/p`, { contentType: 'application/strategic-merge-patch+json', body: { spec: { template: { spec: { containers: [{ name: 'a', image: 'a:2', env: [{ name: 'Y', value: 'changed' }, { name: 'Z', value: '3' }], ports: [{ containerPort: 81 }] }] } } } } })
  t.equal(smp.status, 200)
  const [a, b] = smp.json.spec.template.spec.containers
  t.equal(a.image, 'a:2')
  t.equal(b.image, 'b:1', 'other containers kept')
  t.same(a.env, [{ name: 'X', value: '1' }, { name: 'Y', value: 'changed' }, { name: 'Z', value: '3' }], 'env merged by name')
  t.same(a.ports.map((p: { containerPort: number }) => p.containerPort), [80, 81], 'ports merged by containerPort')
  t.equal(smp.json.metadata.generation, 2, 'spec change bumps generation')
  const del = await raw(sim, 'PATCH', `${D}/p`, { contentType: 'application/strategic-merge-patch+json', body: { spec: { template: { spec: { containers: [{ name: 'b', $patch: 'delete' }] } } } } })
  t.same(del.json.spec.template.spec.containers.map((c: { name: string }) => c.name), ['a'], '$patch: delete removes by key')
  const merge = await raw(sim, 'PATCH', `${D}/p`, { contentType: 'application/merge-patch+json', body: { metadata: { labels: { team: 'x' } } } })
  t.equal(merge.json.metadata.labels.team, 'x')
  t.equal(merge.json.metadata.generation, 3, 'metadata-only change keeps generation')
  const json = await raw(sim, 'PATCH', `${D}/p`, { contentType: 'application/json-patch+json', body: [{ op: 'test', path: '/spec/replicas', value: 1 }, { op: 'replace', path: '/spec/replicas', value: 2 }] })
  t.equal(json.json.spec.replicas, 2)
  const failedTest = await raw(sim, 'PATCH', `${D}/p`, { contentType: 'application/json-patch+json', body: [{ op: 'test', path: '/spec/replicas', value: 9 }] })
  t.equal(failedTest.status, 422)
  const scale = await raw(sim, 'GET', `${D}/p/scale`)
  t.match(scale.json, { kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { selector: 'app=p' } })
  const scaled = await raw(sim, 'PATCH', `${D}/p/scale`, { contentType: 'application/merge-patch+json', body: { spec: { replicas: 4 } } })
  t.equal(scaled.json.spec.replicas, 4)
  t.equal((await raw(sim, 'GET', `${D}/p`)).json.spec.replicas, 4)
})

t.test('dryRun=All on every write, and the status subresource', async (t) => {
  const c = await raw(sim, 'POST', `${CM}?dryRun=All`, { body: { metadata: { name: 'dry' } } })
  t.equal(c.status, 201)
  t.equal((await raw(sim, 'GET', `${CM}/dry`)).status, 404, 'dry-run create persists nothing')
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'wet' }, data: { a: '1' } } })
  const p = await raw(sim, 'PATCH', `${CM}/wet?dryRun=All`, { contentType: 'application/merge-patch+json', body: { data: { a: '2' } } })
  t.equal(p.json.data.a, '2')
  const cur = await raw(sim, 'GET', `${CM}/wet`)
  t.equal(cur.json.data.a, '1', 'dry-run patch persists nothing')
  t.equal((await raw(sim, 'PUT', `${CM}/wet?dryRun=All`, { body: { ...cur.json, data: { a: '3' } } })).json.data.a, '3')
  t.equal((await raw(sim, 'DELETE', `${CM}/wet?dryRun=All`)).status, 200)
  t.equal((await raw(sim, 'GET', `${CM}/wet`)).json.data.a, '1', 'dry-run update and delete persist nothing')
  t.equal((await raw(sim, 'POST', `${CM}?dryRun=Some`, { body: { metadata: { name: 'x' } } })).status, 400)

  const PVC = '/api/v1/namespaces/default/persistentvolumeclaims'
  const pvc = (await raw(sim, 'POST', PVC, { body: { metadata: { name: 'c' }, spec: { storageClassName: '', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Bound' } } })).json
  t.equal(pvc.status.phase, 'Pending', 'status is not settable on create')
  const mainPut = await raw(sim, 'PUT', `${PVC}/c`, { body: { ...pvc, status: { phase: 'Lost' } } })
  t.equal(mainPut.json.status.phase, 'Pending', 'the main resource ignores status changes')
  const statusPut = await raw(sim, 'PUT', `${PVC}/c/status`, { body: { ...mainPut.json, metadata: { ...mainPut.json.metadata, labels: { ignored: 'yes' } }, status: { phase: 'Lost' } } })
  t.equal(statusPut.json.status.phase, 'Lost', 'the status subresource changes status')
  t.notOk(statusPut.json.metadata.labels?.ignored, '…and only status')
})

t.test('list: selectors and pagination', async (t) => {
  for (const [name, tier] of [['l1', 'web'], ['l2', 'web'], ['l3', 'db'], ['l4', 'cache']]) await raw(sim, 'POST', CM, { body: { metadata: { name, labels: { suite: 'list', tier } } } })
  const names = async (q: string) => (await raw(sim, 'GET', `${CM}?${q}`)).json.items.map((i: { metadata: { name: string } }) => i.metadata.name)
  t.same(await names('labelSelector=suite%3Dlist,tier%3Dweb'), ['l1', 'l2'])
  t.same(await names('labelSelector=suite%3Dlist,tier%20in%20(db,cache)'), ['l3', 'l4'])
  t.same(await names('labelSelector=suite%3Dlist,tier!%3Dweb'), ['l3', 'l4'])
  t.same(await names('labelSelector=suite%3Dlist&fieldSelector=metadata.name%3Dl3'), ['l3'])
  t.equal((await raw(sim, 'GET', `${CM}?fieldSelector=data.x%3Dy`)).status, 400, 'unsupported field selector')
  t.same(await names('labelSelector=!suite,tier'), ['one'], 'has tier but no suite label')
  const page1 = (await raw(sim, 'GET', `${CM}?labelSelector=suite%3Dlist&limit=3`)).json
  t.equal(page1.items.length, 3)
  t.equal(page1.metadata.remainingItemCount, 1)
  const page2 = (await raw(sim, 'GET', `${CM}?labelSelector=suite%3Dlist&limit=3&continue=${page1.metadata.continue}`)).json
  t.same(page2.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['l4'])
  t.notOk(page2.metadata.continue)
  t.notOk(page1.items[0].kind, 'built-in list items carry no kind, as on the wire')
  const table = (await raw(sim, 'GET', `${CM}?labelSelector=suite%3Dlist`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' })).json
  t.equal(table.kind, 'Table')
  t.same(table.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Data', 'Age'])
  t.same(table.rows[0].cells.slice(0, 2), ['l1', 0])
  t.equal(table.rows[0].object.kind, 'PartialObjectMetadata')
  const pods = await raw(sim, 'GET', '/api/v1/pods?fieldSelector=status.phase%3DRunning')
  t.equal(pods.status, 200, 'status.phase field selector on pods')
})

t.test('watch: headers at once, framing, selectors, timeoutSeconds', async (t) => {
  const rv = (await raw(sim, 'GET', CM)).json.metadata.resourceVersion
  const w = rawStream(sim, `${CM}?watch=true&resourceVersion=${rv}&labelSelector=w%3D1&timeoutSeconds=1`)
  t.equal(await w.status, 200, 'headers arrive before any event')
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'w-out', labels: { w: '0' } } } })
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'w-in', labels: { w: '1' } } } })
  await raw(sim, 'PATCH', `${CM}/w-out`, { contentType: 'application/merge-patch+json', body: { metadata: { labels: { w: '1' } } } })
  await raw(sim, 'PATCH', `${CM}/w-in`, { contentType: 'application/merge-patch+json', body: { metadata: { labels: { w: '2' } } } })
  await waitFor('three events', () => w.lines.length >= 3)
  const evs = w.lines.map((l) => JSON.parse(l) as { type: string; object: { kind: string; metadata: { name: string } } })
  t.same(evs.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED w-in', 'ADDED w-out', 'DELETED w-in'], 'selector transitions become ADDED/DELETED')
  t.equal(evs[0].object.kind, 'ConfigMap')
  await w.ended
  t.pass('timeoutSeconds ends the watch')
})

t.test('deletion propagation: foreground, orphan, deletecollection', async (t) => {
  const owner = (await raw(sim, 'POST', CM, { body: { metadata: { name: 'owner' } } })).json
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, blockOwnerDeletion: true }
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'dep', ownerReferences: [ref], finalizers: ['example.com/slow'] } } })
  const fg = await raw(sim, 'DELETE', `${CM}/owner`, { body: { propagationPolicy: 'Foreground' } })
  t.equal(fg.status, 202)
  t.match(fg.json.metadata, { finalizers: ['foregroundDeletion'], deletionTimestamp: /Z$/ })
  await waitFor('dependent marked for deletion', async () => (await raw(sim, 'GET', `${CM}/dep`)).json.metadata.deletionTimestamp)
  t.equal((await raw(sim, 'GET', `${CM}/owner`)).status, 200, 'owner waits for its blocking dependent')
  await raw(sim, 'PATCH', `${CM}/dep`, { contentType: 'application/json-patch+json', body: [{ op: 'remove', path: '/metadata/finalizers' }] })
  await waitFor('owner gone', async () => (await raw(sim, 'GET', `${CM}/owner`)).status === 404)

  const o2 = (await raw(sim, 'POST', CM, { body: { metadata: { name: 'owner2' } } })).json
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'dep2', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner2', uid: o2.metadata.uid }] } } })
  await raw(sim, 'DELETE', `${CM}/owner2?propagationPolicy=Orphan`)
  await waitFor('owner2 gone', async () => (await raw(sim, 'GET', `${CM}/owner2`)).status === 404)
  const orphan = (await raw(sim, 'GET', `${CM}/dep2`)).json
  t.notOk(orphan.metadata.ownerReferences, 'orphaned dependent survives without the reference')

  const o3 = (await raw(sim, 'POST', CM, { body: { metadata: { name: 'owner3' } } })).json
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'dep3', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner3', uid: o3.metadata.uid }] } } })
  await raw(sim, 'DELETE', `${CM}/owner3`)
  await waitFor('background cascade', async () => (await raw(sim, 'GET', `${CM}/dep3`)).status === 404)

  const dc = await raw(sim, 'DELETE', `${CM}?labelSelector=suite%3Dlist`)
  t.equal(dc.json.items.length, 4)
  t.same((await raw(sim, 'GET', `${CM}?labelSelector=suite%3Dlist`)).json.items, [])
})

t.test('pod logs: container, tailLines, timestamps, sinceSeconds, previous', async (t) => {
  const P = '/api/v1/namespaces/default/pods'
  await raw(sim, 'POST', P, { body: { metadata: { name: 'two', annotations: { 'kube-sim.io/logs': 'hello\nworld' } }, spec: { containers: [{ name: 'a', image: 'a' }, { name: 'b', image: 'b' }] } } })
  await waitFor('two running', async () => (await raw(sim, 'GET', `${P}/two`)).json.status.phase === 'Running')
  const noContainer = await raw(sim, 'GET', `${P}/two/log`)
  t.equal(noContainer.status, 400)
  t.match(noContainer.json.message, 'a container name must be specified for pod two, choose one of: [a b]')
  t.equal((await raw(sim, 'GET', `${P}/two/log?container=a`)).text, 'hello\n', 'annotation lines come first')
  const ts = await raw(sim, 'GET', `${P}/two/log?container=a&timestamps=true`)
  t.match(ts.text, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z hello\n$/)
  t.equal((await raw(sim, 'GET', `${P}/two/log?container=a&sinceSeconds=3600`)).text, 'hello\n')
  t.equal((await raw(sim, 'GET', `${P}/two/log?container=a&tailLines=0`)).text, '')
  t.equal((await raw(sim, 'GET', `${P}/two/log?container=a&previous=true`)).status, 400, 'no previous container yet')
  const pending = await raw(sim, 'POST', P, { body: { metadata: { name: 'unpullable' }, spec: { containers: [{ name: 'c', image: 'x-fail-pull' }] } } })
  t.equal(pending.status, 201)
  const waiting = await raw(sim, 'GET', `${P}/unpullable/log`)
  t.equal(waiting.status, 400)
  t.match(waiting.json.message, /is waiting to start/)
})

t.test('self review and token request', async (t) => {
  const r = await raw(sim, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, cert: sim.identities.clientCert, token: null })
  t.match(r.json.status.userInfo, { username: 'kube-sim-cert-admin', groups: ['system:masters', 'system:authenticated'] })
  const tr = await raw(sim, 'POST', '/api/v1/namespaces/default/serviceaccounts/default/token', { body: { spec: { expirationSeconds: 600 } } })
  t.equal(tr.status, 201)
  const who = await raw(sim, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: {}, token: tr.json.status.token })
  t.equal(who.json.status.userInfo.username, 'system:serviceaccount:default:default', 'issued token authenticates')
})

// ---- fault injection (stop/restart last: it severs every connection) ----

t.test('failNext fails exactly the next n matching requests', async (t) => {
  sim.faults.failNext(2, 503)
  const a = await raw(sim, 'GET', CM)
  t.equal(a.status, 503)
  t.match(a.json, { kind: 'Status', code: 503, reason: 'ServiceUnavailable' })
  t.equal((await raw(sim, 'GET', CM)).status, 503)
  t.equal((await raw(sim, 'GET', CM)).status, 200, 'then requests succeed again')

  sim.faults.failNext(1, 429, { pathPrefix: '/apis/apps', method: 'POST' })
  t.equal((await raw(sim, 'GET', CM)).status, 200, 'a non-matching request is untouched')
  t.equal((await raw(sim, 'GET', '/apis/apps/v1/namespaces/default/deployments')).status, 200, 'wrong method is untouched')
  const throttled = await raw(sim, 'POST', '/apis/apps/v1/namespaces/default/deployments', { body: {} })
  t.equal(throttled.status, 429)
  t.equal(throttled.headers['retry-after'], '1', 'throttling tells clients when to retry')
  t.equal((await raw(sim, 'GET', '/healthz', { token: null })).status, 200, 'health endpoints are never failed')
})

t.test('setLatency delays every request', async (t) => {
  sim.faults.setLatency(150)
  const start = Date.now()
  t.equal((await raw(sim, 'GET', CM)).status, 200)
  t.ok(Date.now() - start >= 140, `took ${Date.now() - start} ms (timer and clock granularity allow a few ms)`)
  sim.faults.setLatency(0)
})

t.test('dropWatches ends open watches', async (t) => {
  const before = sim.openWatches()
  const w = rawStream(sim, `${CM}?watch=true`)
  t.equal(await w.status, 200)
  await waitFor('watch registered', () => sim.openWatches() === before + 1)
  sim.faults.dropWatches()
  await w.ended
  t.equal(sim.openWatches(), 0)
})

t.test('compactHistory makes old resourceVersions expire (410)', async (t) => {
  for (const n of ['page-a', 'page-b']) await raw(sim, 'POST', CM, { body: { metadata: { name: n } } })
  const list = (await raw(sim, 'GET', `${CM}?limit=1`)).json
  t.ok(list.metadata.continue, 'a paged list has a continue token')
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'after-list' } } })
  sim.faults.compactHistory()
  const w = rawStream(sim, `${CM}?watch=true&resourceVersion=${list.metadata.resourceVersion}`)
  t.equal(await w.status, 200)
  await w.ended
  const ev = JSON.parse(w.lines[0])
  t.match(ev, { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: /too old resource version/ } })
  const cont = await raw(sim, 'GET', `${CM}?limit=1&continue=${list.metadata.continue}`)
  t.equal(cont.status, 410, 'an expired continue token is 410 too')
  const fresh = rawStream(sim, `${CM}?watch=true&resourceVersion=${(await raw(sim, 'GET', CM)).json.metadata.resourceVersion}`)
  t.equal(await fresh.status, 200)
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'after-compaction' } } })
  await waitFor('event after compaction', () => fresh.lines.length >= 1)
  t.match(JSON.parse(fresh.lines[0]), { type: 'ADDED', object: { metadata: { name: 'after-compaction' } } }, 'a current resourceVersion still works')
  fresh.close()
})

t.test('stop and restart the listener on the same port, keeping state', async (t) => {
  await raw(sim, 'POST', CM, { body: { metadata: { name: 'survivor' } } })
  const w = rawStream(sim, `${CM}?watch=true`)
  await w.status
  await sim.faults.stop()
  await w.ended
  const down = await raw(sim, 'GET', CM).catch((e: NodeJS.ErrnoException) => e)
  t.equal((down as NodeJS.ErrnoException).code, 'ECONNREFUSED', 'connections are refused while stopped')
  await sim.faults.restart()
  const back = await raw(sim, 'GET', `${CM}/survivor`)
  t.equal(back.status, 200, 'same URL, same state')
})

// ---- units ----

/** The error `fn` throws (undefined if none), for matching against a shape. */
function caught(fn: () => unknown): unknown {
  try { fn(); return undefined } catch (e) { return e }
}

t.test('JSON patch and merge patch', async (t) => {
  const doc = { a: { b: [1, 2] }, c: 'x' }
  t.same(applyJsonPatch(doc, [{ op: 'add', path: '/a/b/-', value: 3 }, { op: 'remove', path: '/c' }, { op: 'copy', from: '/a/b', path: '/d' }]), { a: { b: [1, 2, 3] }, d: [1, 2, 3] })
  t.same(doc, { a: { b: [1, 2] }, c: 'x' }, 'input untouched')
  t.match(caught(() => applyJsonPatch(doc, [{ op: 'replace', path: '/nope', value: 1 }])), { status: { code: 422 } })
  t.same(applyMergePatch({ a: 1, b: { c: 2, d: 3 } }, { a: null, b: { c: 5 } }), { b: { c: 5, d: 3 } })
})

t.test('strategic merge patch', async (t) => {
  const pod = { spec: { containers: [{ name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }] }, { name: 'b', image: 'b:1' }], finalizers: ['f1'] }, metadata: { finalizers: ['x'] } }
  const out = applyStrategicMergePatch(pod, {
    spec: { containers: [{ name: 'b', image: 'b:2' }, { name: 'c', image: 'c:1' }], $setElementOrder: undefined },
    metadata: { finalizers: ['y'] },
  })
  t.same(out.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`), ['a=a:1', 'b=b:2', 'c=c:1'])
  t.same(out.metadata.finalizers, ['x', 'y'], 'finalizers merge as a set')
  const replaced = applyStrategicMergePatch(pod, { spec: { containers: [{ $patch: 'replace' }, { name: 'z', image: 'z' }] } })
  t.same(replaced.spec.containers, [{ name: 'z', image: 'z' }])
  const reordered = applyStrategicMergePatch(pod, { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } })
  t.same(reordered.spec.containers.map((c: { name: string }) => c.name), ['b', 'a'])
  const removed = applyStrategicMergePatch(pod, { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } })
  t.same(removed.metadata.finalizers, [])
})

t.test('server-side apply: ownership, conflicts, removal', async (t) => {
  const opts = { apiVersion: 'apps/v1', force: false, hasStatusSubresource: true }
  const cfg = (replicas: number, extra: Record<string, string> = {}): KObject => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', labels: { app: 'd', ...extra } },
    spec: { replicas, template: { spec: { containers: [{ name: 'c', image: 'i:1', ports: [{ containerPort: 80 }] }] } } },
  })
  const created = serverSideApply(undefined, cfg(1, { extra: 'yes' }), { ...opts, manager: 'a' })
  const set = fromFieldsV1(created.metadata.managedFields![0].fieldsV1)
  t.ok(set.has(JSON.stringify(['f:spec', 'f:replicas'])))
  t.ok(set.has(JSON.stringify(['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"c"}'])), 'keyed list item is owned')
  t.ok(set.has(JSON.stringify(['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"c"}', 'f:ports', 'k:{"containerPort":80,"protocol":"TCP"}', 'f:containerPort'])), 'ports keyed with defaulted protocol')
  t.same(fromFieldsV1(toFieldsV1(set)), set, 'FieldsV1 round-trips')

  const shared = serverSideApply(created, cfg(1), { ...opts, manager: 'b' })
  t.equal(shared.metadata.managedFields!.length, 2, 'same value: shared ownership, no conflict')
  t.equal(shared.metadata.labels!.extra, 'yes', 'b not sending a field a owns leaves it alone')

  t.match(caught(() => serverSideApply(shared, cfg(3), { ...opts, manager: 'b' })), { status: { code: 409, details: { causes: [{ field: '.spec.replicas', message: 'conflict with "a" using apps/v1' }] } } })
  const forced = serverSideApply(shared, cfg(3), { ...opts, manager: 'b', force: true })
  t.equal(forced.spec.replicas, 3)
  const aSet = fromFieldsV1(forced.metadata.managedFields!.find((m) => m.manager === 'a')!.fieldsV1)
  t.notOk(aSet.has(JSON.stringify(['f:spec', 'f:replicas'])), 'forcing takes ownership away')

  t.match(caught(() => serverSideApply(forced, cfg(1), { ...opts, manager: 'a' })), { status: { code: 409 } }, 'now a conflicts with b')
  const dropped = serverSideApply(forced, cfg(3), { ...opts, manager: 'a' })
  t.notOk(dropped.metadata.labels!.extra, 'a field its only owner stops applying is removed')
  t.equal(dropped.metadata.labels!.app, 'd', 'a field another manager still owns stays')

  const before: KObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } }
  trackUpdate(undefined, before, { manager: 'creator', apiVersion: 'v1' })
  const after: KObject = { ...structuredClone(before), data: { a: '1', b: '2' } }
  trackUpdate(before, after, { manager: 'editor', apiVersion: 'v1' })
  t.same(after.metadata.managedFields!.map((m) => [m.manager, m.operation, Object.keys(m.fieldsV1['f:data'])]), [['creator', 'Update', ['f:a']], ['editor', 'Update', ['f:b']]])
  t.ok(fieldSetOf(after).size >= 2)
})

t.test('server-side apply: a keyed list item its only manager stops applying goes whole, not leaving its other fields behind', async (t) => {
  const svc = (port: number): KObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port, protocol: 'TCP', targetPort: 8080 }] } })
  const opts = { apiVersion: 'v1', force: false, hasStatusSubresource: true, manager: 'a' }
  const moved = serverSideApply(serverSideApply(undefined, svc(80), opts), svc(81), opts)
  t.same(moved.spec.ports, [{ port: 81, protocol: 'TCP', targetPort: 8080 }])
  const entry = moved.metadata.managedFields!.find((m) => m.manager === 'a')!
  t.same(Object.keys(entry.fieldsV1['f:spec']['f:ports']), ['k:{"port":81,"protocol":"TCP"}'])
})

t.test('the watch history is a bounded ring', async (t) => {
  const store = new Store(5)
  const rv = store.resourceVersion
  for (let i = 0; i < 5; i++) store.put('/configmaps', { metadata: { name: `c${i}`, namespace: 'default' } })
  t.equal((store.since(rv) as unknown[]).length, 5, 'everything since rv is still there')
  store.put('/configmaps', { metadata: { name: 'c5', namespace: 'default' } })
  t.equal(store.since(rv), 'expired', 'one more write pushes rv out of the history')
  t.equal((store.since(store.resourceVersion - 1) as unknown[]).length, 1)
})

t.test('label selectors', async (t) => {
  const l = { app: 'web', tier: 'front' }
  const m = (s: string) => matchLabels(parseLabelSelector(s), l)
  t.ok(m('app=web,tier'))
  t.ok(m('app in (web, api),!missing'))
  t.notOk(m('tier notin (front)'))
  t.ok(m('app!=db'))
  t.notOk(m('app==db'))
  t.throws(() => parseLabelSelector('a b c'))
})

t.test('cron schedules', async (t) => {
  const at = (iso: string) => Date.parse(iso)
  t.equal(new Date(nextAfter(parseSchedule('*/15 * * * *'), at('2025-01-01T10:07:30Z'))!).toISOString(), '2025-01-01T10:15:00.000Z')
  t.equal(new Date(nextAfter(parseSchedule('@daily'), at('2025-01-01T10:07:00Z'))!).toISOString(), '2025-01-02T00:00:00.000Z')
  t.equal(new Date(nextAfter(parseSchedule('0 9 * * mon-fri'), at('2025-01-03T10:00:00Z'))!).toISOString(), '2025-01-06T09:00:00.000Z', 'Friday 10:00 → Monday 09:00')
  t.throws(() => parseSchedule('61 * * * *'))
  t.throws(() => parseSchedule('* * *'))
})

t.test('exec shell', async (t) => {
  const sh = new Shell({ env: { A: '1' }, cwd: '/', hostname: 'pod-1', files: new Map([['/etc/hostname', 'pod-1\n']]), dirs: new Set(['/etc', '/tmp']) })
  const run = (cmd: string) => { let out = ''; let err = ''; const code = sh.run(cmd, { out: (s) => { out += s }, err: (s) => { err += s } }); return { out, err, code } }
  t.same(run('echo "a  b" $A \'$A\''), { out: 'a  b 1 $A\n', err: '', code: 0 })
  t.same(run('cd /etc && pwd && ls && cat hostname'), { out: '/etc\nhostname\npod-1\n', err: '', code: 0 })
  t.same(run('nope || echo fallback'), { out: 'fallback\n', err: 'sh: nope: not found\n', code: 0 })
  t.same(run('false; echo $?'), { out: '1\n', err: '', code: 0 })
  t.same(run('echo x > /tmp/f; echo y >> /tmp/f; cat /tmp/f | wc -l'), { out: '2\n', err: '', code: 0 })
  t.same(run('env | grep ^A='), { out: 'A=1\n', err: '', code: 0 })
  t.throws(() => run('exit 5'), new ExitSignal(5))
  t.same(run('sh -c "echo inner; exit 3"; echo $?'), { out: 'inner\n3\n', err: '', code: 0 })
})
