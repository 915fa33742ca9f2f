// A realistic graph runs against the simulator: kubectl sees every object wired, labelled and placed as
// drawn; a second identical run changes nothing; one changed field configures only its node; the run is
// recorded with its version, counters and tracked resources, and no run-time secret is kept anywhere.
import t from 'tap'
import { runFixture, shopGraph, TRIGGER, SECRET_VALUE, ENV_VALUE } from './fixture.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, WORKFLOW_ID_ANNOTATION, NODE_ID_ANNOTATION } from '../../src/manifests/index.ts'

const f = await runFixture(t)
const { owner, call, kubectlJson } = f
const id = await f.workflow(shopGraph())
const runUrl = `/v1/api/workflows/${id}/run`
const actions = (run: { nodes: Array<{ node_id: string; kind: string; action: string }> }) => Object.fromEntries(run.nodes.map((n) => [`${n.node_id}:${n.kind}`, n.action]))

t.test('the first run creates every object, wired, labelled and in its namespace (as kubectl sees it)', async (t) => {
  const res = await call(owner, 'POST', runUrl, { trigger_data: TRIGGER })
  t.equal(res.status, 200, JSON.stringify(res.body))
  const run = res.body
  t.match(run, { workflow_id: id, status: 'completed', dry_run: false, cluster: 'sim', namespace: null, error: null, triggered_by: owner.user.id, version: 1 })
  t.ok(run.cluster_id, 'the cluster id is recorded')
  t.same(actions(run), {
    'n-config:ConfigMap': 'created', 'n-secret:Secret': 'created', 'n-pvc:PersistentVolumeClaim': 'created', 'n-api:Deployment': 'created',
    'n-svc:Service': 'created', 'n-ing:Ingress': 'created', 'n-hpa:HorizontalPodAutoscaler': 'created',
    'n-config:Namespace': 'created',
  }, 'one result per object, the namespace under the first node placed in it')
  t.ok(run.finished_at && run.duration_ms >= 0)
  t.ok(run.logs.length > 0 && run.logs.length <= 500)

  const deploy = await kubectlJson('get', 'deployment', 'api', '-n', 'shop')
  t.equal(deploy.metadata.labels[MANAGED_BY_LABEL], MANAGED_BY)
  t.equal(deploy.metadata.labels.team, 'payments')
  t.equal(deploy.metadata.annotations[WORKFLOW_ID_ANNOTATION], id)
  t.equal(deploy.metadata.annotations[NODE_ID_ANNOTATION], 'n-api')
  t.ok(deploy.status.readyReplicas >= 1, 'the run waited for the workload to become ready')
  const pod = deploy.spec.template.spec
  const container = pod.containers[0]
  t.same(container.envFrom.map((e: Record<string, { name: string }>) => e.configMapRef?.name ?? e.secretRef?.name).sort(), ['api-config', 'api-secrets'], 'configmap and secret wired by envFrom')
  t.ok(container.env.some((e: { name: string; value: string }) => e.name === 'API_TOKEN' && e.value === ENV_VALUE), 'the run-time env var reached the cluster')
  t.ok(pod.volumes.some((v: { persistentVolumeClaim?: { claimName: string } }) => v.persistentVolumeClaim?.claimName === 'uploads'), 'the pvc is mounted')
  const secret = await kubectlJson('get', 'secret', 'api-secrets', '-n', 'shop')
  t.equal(Buffer.from(secret.data.DB_PASSWORD, 'base64').toString(), SECRET_VALUE, 'the secret value reached the cluster')
  const svc = await kubectlJson('get', 'service', 'api-svc', '-n', 'shop')
  t.same(svc.spec.selector, deploy.spec.selector.matchLabels, 'the service selects the deployment\'s pods')
  t.equal(svc.spec.ports[0].targetPort, 8080)
  const ing = await kubectlJson('get', 'ingress', 'web', '-n', 'shop')
  t.equal(ing.spec.rules[0].http.paths[0].backend.service.name, 'api-svc')
  const hpa = await kubectlJson('get', 'hpa', 'api-hpa', '-n', 'shop')
  t.same(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' })
  const pvc = await kubectlJson('get', 'pvc', 'uploads', '-n', 'shop')
  t.equal(pvc.metadata.labels[MANAGED_BY_LABEL], MANAGED_BY)

  const wf = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  t.match(wf, { run_count: 1, success_count: 1, failure_count: 0, current_version: 1 })
  t.ok(wf.last_run_at)
  const version = (await call(owner, 'GET', `/v1/api/workflows/${id}/versions/1`)).body
  t.match(version, { is_automatic: true, run_id: run.id, run_status: 'completed' })
  t.same((await call(owner, 'GET', `/v1/api/workflows/${id}/runs/${run.id}`)).body, run, 'GET /runs/:runId answers the same record')
  const tracked = await f.app.db.collection('resources').countDocuments({ owner_id: owner.user.id, workflow_id: id })
  t.ok(tracked >= 7, `tracked resources recorded (${tracked})`)
})

t.test('a second identical run reports every node unchanged', async (t) => {
  const res = await call(owner, 'POST', runUrl, { trigger_data: TRIGGER })
  t.equal(res.status, 200)
  t.equal(res.body.status, 'completed', JSON.stringify(res.body.error))
  t.same([...new Set(res.body.nodes.map((n: { action: string }) => n.action))], ['unchanged'], JSON.stringify(actions(res.body)))
  t.equal(res.body.version, 2, 'every run records a version')
})

t.test('changing one field configures only that node', async (t) => {
  await f.save(id, shopGraph({ image: 'ghcr.io/acme/api:1.4.3' }))
  const res = await call(owner, 'POST', runUrl, { trigger_data: TRIGGER })
  t.equal(res.body.status, 'completed', JSON.stringify(res.body.error))
  const changed = res.body.nodes.filter((n: { action: string }) => n.action !== 'unchanged').map((n: { node_id: string; action: string }) => `${n.node_id}:${n.action}`)
  t.same(changed, ['n-api:configured'])
  t.equal((await kubectlJson('get', 'deployment', 'api', '-n', 'shop')).spec.template.spec.containers[0].image, 'ghcr.io/acme/api:1.4.3')
})

t.test('a dry run creates nothing, names the changed fields, and is history but not a counted run', async (t) => {
  const before = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  await f.save(id, shopGraph({ image: 'ghcr.io/acme/api:2.0.0', logFormat: 'text' }))
  const other = shopGraph({ namespace: 'dry' })
  const dryId = await f.workflow(other, 'dry')
  let res = await call(owner, 'POST', `/v1/api/workflows/${dryId}/run`, { dry_run: true, trigger_data: TRIGGER })
  t.equal(res.status, 200)
  t.match(res.body, { dry_run: true, status: 'completed', version: 0 })
  t.same([...new Set(res.body.nodes.map((n: { action: string }) => n.action))], ['created'], 'every object would be created')
  const namespaces = (await kubectlJson<{ items: Array<{ metadata: { name: string } }> }>('get', 'namespaces')).items.map((n) => n.metadata.name)
  t.notOk(namespaces.includes('dry'), 'not even the namespace was created')
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${dryId}/versions`)).body.total, 0, 'no version recorded')

  res = await call(owner, 'POST', runUrl, { dry_run: true, trigger_data: TRIGGER })
  t.equal(res.status, 200)
  const api = res.body.nodes.find((n: { node_id: string }) => n.node_id === 'n-api')
  t.equal(api.action, 'configured')
  const image = api.diff.changed.find((c: { path: string }) => /containers.*image/.test(c.path))
  t.match(image, { old: 'ghcr.io/acme/api:1.4.3', new: 'ghcr.io/acme/api:2.0.0' }, `diff names the image: ${JSON.stringify(api.diff)}`)
  const config = res.body.nodes.find((n: { node_id: string; kind: string }) => n.node_id === 'n-config' && n.kind === 'ConfigMap')
  t.equal(config.action, 'configured')
  t.match(config.diff.changed, [{ path: 'data.LOG_FORMAT', old: 'json', new: 'text' }])
  t.ok(res.body.nodes.filter((n: { node_id: string; kind: string }) => n.node_id !== 'n-api' && n.kind !== 'ConfigMap').every((n: { action: string }) => n.action === 'unchanged'))
  const live = await kubectlJson('get', 'deployment', 'api', '-n', 'shop')
  t.equal(live.spec.template.spec.containers[0].image, 'ghcr.io/acme/api:1.4.3', 'the live object is untouched')
  t.equal((await kubectlJson('get', 'configmap', 'api-config', '-n', 'shop')).data.LOG_FORMAT, 'json')
  const after = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  t.match(after, { run_count: before.run_count, current_version: before.current_version }, 'not counted, no version')
  const history = (await call(owner, 'GET', `/v1/api/workflows/${id}/runs`)).body
  t.equal(history.runs[0].dry_run, true, 'the dry run is in the history')
})

t.test('no run-time secret or env value is in any stored document or log line', async (t) => {
  const everything = await f.everythingStored()
  t.notOk(everything.includes(SECRET_VALUE), 'secret value')
  t.notOk(everything.includes(Buffer.from(SECRET_VALUE).toString('base64')), 'secret value, base64')
  t.notOk(everything.includes(ENV_VALUE), 'env value')
})

t.test('two simultaneous runs of one workflow: exactly one 409, naming the running run', async (t) => {
  const replies = await Promise.all([call(owner, 'POST', runUrl, { trigger_data: TRIGGER }), call(owner, 'POST', runUrl, { trigger_data: TRIGGER })])
  const statuses = replies.map((r) => r.status).sort()
  t.same(statuses, [200, 409])
  const won = replies.find((r) => r.status === 200)!.body
  const lost = replies.find((r) => r.status === 409)!.body
  t.match(lost.error, won.id)
  t.equal((await call(owner, 'POST', runUrl, { trigger_data: TRIGGER })).status, 200, 'the lock is released when the run finishes')
})

t.test('a run that outlasts RUN_REPLY_WAIT_MS answers 202 with a Location; it finishes anyway', async (t) => {
  const slow = await runFixture(t, { RUN_REPLY_WAIT_MS: 0 })
  const wid = await slow.workflow(shopGraph({ namespace: 'slow' }))
  const finished = slow.app.bus.next('run.finished', (e) => e.workflow_id === wid)
  const res = await slow.call(slow.owner, 'POST', `/v1/api/workflows/${wid}/run`, { trigger_data: TRIGGER })
  t.equal(res.status, 202)
  t.equal(res.body.status, 'running')
  t.equal(res.headers.location, `/v1/api/workflows/${wid}/runs/${res.body.id}`)
  const event = await finished
  t.equal(event.status, 'completed')
  const later = await slow.call(slow.owner, 'GET', res.headers.location as string)
  t.match(later.body, { id: res.body.id, status: 'completed' })
})

t.test('checks come first: nothing is recorded when one fails', async (t) => {
  const broken = await f.workflow({ nodes: [{ id: 'bad', type: 'deployment', position: { x: 0, y: 0 }, data: { name: 'Bad_Name' } }], edges: [] }, 'broken')
  const res = await call(owner, 'POST', `/v1/api/workflows/${broken}/run`, {})
  t.equal(res.status, 400)
  t.match(res.body.error, /node bad:/)
  t.same(Object.keys(res.body), ['error'])
  t.equal(await f.app.db.collection('workflow_runs').countDocuments({ workflow_id: broken }), 0)
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${broken}`)).body.current_version, 0)
  const none = await call(owner, 'POST', '/v1/api/workflows', { name: 'nowhere' })
  const noCluster = await call(owner, 'POST', `/v1/api/workflows/${none.body.id}/run`, {})
  t.equal(noCluster.status, 400)
  t.match(noCluster.body.error, /cluster/)
  t.equal((await call(owner, 'POST', runUrl, { cluster: 'missing' })).status, 404)
  const runsBefore = await f.app.db.collection('workflow_runs').countDocuments({ workflow_id: id })
  t.equal((await call(owner, 'POST', runUrl, { trigger_data: { secrets: { x: { k: 1 } } } })).status, 400, 'values are strings')
  const tooMany = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`K${i}`, 'v']))
  t.equal((await call(owner, 'POST', runUrl, { trigger_data: { envVars: { 'n-api': tooMany } } })).status, 400, 'at most 100 values per node')
  t.equal((await call(owner, 'POST', runUrl, { trigger_data: TRIGGER, surprise: true })).status, 400, 'unknown fields are refused')
  t.equal(await f.app.db.collection('workflow_runs').countDocuments({ workflow_id: id }), runsBefore, 'none of these recorded a run')
})

t.test('a client that disconnects does not abort the run; the bus carries its progress', async (t) => {
  const wid = await f.workflow(shopGraph({ namespace: 'hangup' }), 'hang up')
  const events: string[] = []
  const offs = [
    f.app.bus.on('run.started', (e) => { if (e.workflow_id === wid) events.push('started') }),
    f.app.bus.on('run.object', (e) => { if (e.workflow_id === wid) { events.push(`object:${e.result.kind}`); t.notOk('live' in e.result, 'no live object on the bus') } }),
  ]
  t.teardown(() => offs.forEach((off) => off()))
  const finished = f.app.bus.next('run.finished', (e) => e.workflow_id === wid)
  const address = await f.app.listen({ port: 0, host: '127.0.0.1' })
  const abort = new AbortController()
  const started = f.app.bus.next('run.started', (e) => e.workflow_id === wid)
  const request = fetch(`${address}/v1/api/workflows/${wid}/run`, {
    method: 'POST', signal: abort.signal, headers: { ...owner.headers, 'content-type': 'application/json' }, body: JSON.stringify({ trigger_data: TRIGGER }),
  }).catch((err: Error) => err.name)
  await started
  abort.abort()
  t.equal(await request, 'AbortError', 'the client went away')
  const event = await finished
  t.equal(event.status, 'completed')
  t.equal(events[0], 'started')
  t.same(events.filter((e) => e.startsWith('object:')).sort(), ['object:ConfigMap', 'object:Deployment', 'object:HorizontalPodAutoscaler', 'object:Ingress', 'object:Namespace', 'object:PersistentVolumeClaim', 'object:Secret', 'object:Service'])
  t.ok((await f.kubectlJson('get', 'deployment', 'api', '-n', 'hangup')).status.readyReplicas >= 1)
})

t.test('a namespace override puts every object of the run in that namespace (created if missing)', async (t) => {
  const wid = await f.workflow(shopGraph({ namespace: 'drawn' }), 'override')
  const res = await call(owner, 'POST', `/v1/api/workflows/${wid}/run`, { namespace: 'elsewhere', trigger_data: TRIGGER })
  t.equal(res.status, 200)
  t.match(res.body, { status: 'completed', namespace: 'elsewhere' })
  t.ok(res.body.nodes.filter((n: { kind: string }) => n.kind !== 'Namespace').every((n: { namespace: string }) => n.namespace === 'elsewhere'))
  t.equal((await kubectlJson('get', 'deployment', 'api', '-n', 'elsewhere')).metadata.namespace, 'elsewhere')
  const drawn = (await kubectlJson<{ items: Array<{ metadata: { name: string } }> }>('get', 'namespaces')).items.map((n) => n.metadata.name)
  t.notOk(drawn.includes('drawn'), 'the namespace drawn on the nodes is not used')
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${wid}/runs/aaaaaaaaaaaaaaaaaaaaaaaa`)).status, 404, 'an unknown run id')
  t.equal((await call(owner, 'POST', `/v1/api/workflows/${wid}/run`, { namespace: 'Not_A_Label' })).status, 400, 'the override must be a DNS label')
})
