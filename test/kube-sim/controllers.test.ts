// Controllers: workloads converge (or visibly fail to), services get addresses, storage binds.
import t from 'tap'
import { startKubeSim, utilizationAnnotation } from './index.ts'
import { raw, rawStream, waitFor } from './test-helpers.ts'

const sim = await startKubeSim({ timing: { cronMinuteMs: 150 } })
t.teardown(() => sim.close())

const get = async (path: string) => { const r = await raw(sim, 'GET', path); return r.status === 200 ? r.json : undefined }
const list = async (path: string): Promise<any[]> => (await get(path))?.items ?? [] // eslint-disable-line @typescript-eslint/no-explicit-any
const apply = async (path: string, obj: object) => {
  const r = await raw(sim, 'PATCH', `${path}?fieldManager=test&force=true`, { body: obj, contentType: 'application/apply-patch+yaml' })
  if (r.status >= 300) throw new Error(`apply ${path}: ${r.status} ${r.text}`)
  return r.json
}
const deployment = (name: string, image: string, replicas: number) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } } },
})
const D = '/apis/apps/v1/namespaces/default/deployments'

t.test('a Deployment reaches readyReplicas == replicas, and rolls on a template change', async (t) => {
  await apply(`${D}/web`, deployment('web', 'nginx:1.26', 3))
  const ready = await waitFor('web ready', async () => { const d = await get(`${D}/web`); return d?.status?.readyReplicas === 3 && d })
  t.equal(ready.status.updatedReplicas, 3)
  t.equal(ready.status.observedGeneration, ready.metadata.generation)
  t.match(ready.status.conditions, [{ type: 'Available', status: 'True' }, { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }])
  const pods = await list('/api/v1/namespaces/default/pods?labelSelector=app%3Dweb')
  t.equal(pods.length, 3)
  t.ok(pods.every((p) => p.status.phase === 'Running' && p.status.podIP && p.spec.nodeName), 'pods are scheduled, running, with IPs')
  const events = await list(`/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${pods[0].metadata.name}`)
  t.same(['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started'].filter((r) => events.some((e) => e.reason === r)), ['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started'], 'pod lifecycle events are recorded')

  await apply(`${D}/web`, deployment('web', 'nginx:1.27', 3))
  const rolled = await waitFor('rollout to nginx:1.27', async () => {
    const d = await get(`${D}/web`)
    const ps = await list('/api/v1/namespaces/default/pods?labelSelector=app%3Dweb')
    return d.metadata.generation === 2 && d.status.observedGeneration === 2 && d.status.updatedReplicas === 3 && d.status.readyReplicas === 3 && d.status.replicas === 3
      && ps.length === 3 && ps.every((p) => p.spec.containers[0].image === 'nginx:1.27' && !p.metadata.deletionTimestamp) && d
  })
  t.equal(rolled.metadata.annotations['deployment.kubernetes.io/revision'], '2')
  const rss = await list('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dweb')
  t.equal(rss.length, 2, 'old ReplicaSet kept for history')
  t.same(rss.map((r) => r.spec.replicas).sort(), [0, 3])
})

t.test('a failing image never becomes ready and its pod shows the waiting reason', async (t) => {
  await apply(`${D}/broken`, deployment('broken', 'registry.example/app-fail-pull:1', 2))
  const pod = await waitFor('ImagePullBackOff', async () => (await list('/api/v1/namespaces/default/pods?labelSelector=app%3Dbroken')).find((p) => p.status.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff'))
  t.equal(pod.status.phase, 'Pending')
  t.equal(pod.status.containerStatuses[0].ready, false)
  const d = await get(`${D}/broken`)
  t.notOk(d.status.readyReplicas, 'no replica is ready')
  t.match(d.status.conditions, [{ type: 'Available', status: 'False' }])

  sim.failingImages.crashLoop('example/crasher')
  await apply(`${D}/crasher`, deployment('crasher', 'example/crasher:2.0', 1))
  const crashing = await waitFor('CrashLoopBackOff', async () => (await list('/api/v1/namespaces/default/pods?labelSelector=app%3Dcrasher')).find((p) => p.status.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff'))
  t.equal(crashing.status.phase, 'Running')
  t.ok(crashing.status.containerStatuses[0].restartCount >= 1)
  t.equal(crashing.status.containerStatuses[0].lastState.terminated.exitCode, 1)
  t.notOk((await get(`${D}/crasher`)).status.readyReplicas)

  const never = await raw(sim, 'POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'never' }, spec: { containers: [{ name: 'c', image: 'svc-never-ready' }] } } })
  t.equal(never.status, 201)
  const unhealthy = await waitFor('Unhealthy event', async () => (await list('/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dnever')).find((e) => e.reason === 'Unhealthy'))
  t.equal(unhealthy.type, 'Warning')
  const p = await get('/api/v1/namespaces/default/pods/never')
  t.equal(p.status.phase, 'Running')
  t.match(p.status.conditions, [{ type: 'PodReadyToStartContainers' }, { type: 'Initialized' }, { type: 'Ready', status: 'False', reason: 'ContainersNotReady' }])
})

t.test('a template change is observed before its pods start or fail (as kube-controller-manager writes observedGeneration on every sync)', async (t) => {
  await apply(`${D}/observed`, deployment('observed', 'nginx:1.27', 2))
  await waitFor('observed ready', async () => (await get(`${D}/observed`))?.status?.readyReplicas === 2)
  const changed = await apply(`${D}/observed`, deployment('observed', 'nginx:fail-pull', 2))
  const from = changed.metadata.resourceVersion
  await waitFor('the new pod failing its pull', async () => (await list('/api/v1/namespaces/default/pods?labelSelector=app%3Dobserved')).some((p) => p.status.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff'))
  // Replayed from the change on: the simulator's resourceVersion is one global counter, so it orders events of both kinds.
  const events = async (path: string, until: (o: any) => boolean) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const w = rawStream(sim, `${path}?watch=true&resourceVersion=${from}`)
    try {
      return await waitFor(`events of ${path}`, () => { const objs = w.lines.map((l) => JSON.parse(l).object); return objs.some(until) && objs })
    } finally { w.close() }
  }
  const deployEvents = await events(`${D}`, (o) => o.metadata.name === 'observed' && o.status?.observedGeneration === changed.metadata.generation)
  const podEvents = await events('/api/v1/namespaces/default/pods', (o) => o.metadata.labels?.app === 'observed' && o.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImagePull')
  const observedAt = Number(deployEvents.find((o) => o.metadata.name === 'observed' && o.status?.observedGeneration === changed.metadata.generation).metadata.resourceVersion)
  const newPodAt = Number(podEvents.find((o) => o.metadata.labels?.app === 'observed' && o.spec.containers[0].image === 'nginx:fail-pull').metadata.resourceVersion)
  t.ok(observedAt < newPodAt, `observedGeneration written (rv ${observedAt}) before the new revision's first pod exists (rv ${newPodAt})`)
})

t.test('Jobs complete or fail; CronJobs create Jobs', async (t) => {
  const job = (name: string, image: string, extra: object = {}) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { backoffLimit: 1, ...extra, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'j', image }] } } } })
  await apply('/apis/batch/v1/namespaces/default/jobs/ok', job('ok', 'busybox', { completions: 2, parallelism: 2 }))
  await apply('/apis/batch/v1/namespaces/default/jobs/bad', job('bad', 'busybox-fail-job'))
  const ok = await waitFor('job ok complete', async () => { const j = await get('/apis/batch/v1/namespaces/default/jobs/ok'); return j.status?.conditions?.some((c: { type: string }) => c.type === 'Complete') && j })
  t.equal(ok.status.succeeded, 2)
  t.ok(ok.status.completionTime)
  const bad = await waitFor('job bad failed', async () => { const j = await get('/apis/batch/v1/namespaces/default/jobs/bad'); return j.status?.conditions?.find((c: { type: string }) => c.type === 'Failed') && j })
  t.match(bad.status.conditions.find((c: { type: string }) => c.type === 'Failed'), { status: 'True', reason: 'BackoffLimitExceeded' })
  t.equal(bad.status.failed, 2, 'backoffLimit 1 allows one retry')

  await apply('/apis/batch/v1/namespaces/default/cronjobs/tick', {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'tick' },
    spec: { schedule: '*/2 * * * *', successfulJobsHistoryLimit: 2, jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } } },
  })
  const jobs = await waitFor('two cron jobs', async () => { const l = (await list('/apis/batch/v1/namespaces/default/jobs')).filter((j) => j.metadata.ownerReferences?.[0]?.name === 'tick'); return l.length >= 2 && l })
  t.ok(jobs.every((j) => /^tick-\d+$/.test(j.metadata.name) && Number(j.metadata.name.slice(5)) % 2 === 0), 'named by scheduled minute, on even minutes')
  const cj = await get('/apis/batch/v1/namespaces/default/cronjobs/tick')
  t.ok(cj.status.lastScheduleTime)
})

t.test('StatefulSet pods and their PVCs; DaemonSet pods per node', async (t) => {
  await apply('/apis/apps/v1/namespaces/default/statefulsets/db', {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' },
    spec: {
      replicas: 2, serviceName: 'db', selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'pg', image: 'postgres:16' }] } },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    },
  })
  await waitFor('db ready', async () => (await get('/apis/apps/v1/namespaces/default/statefulsets/db')).status?.readyReplicas === 2)
  const pods = (await list('/api/v1/namespaces/default/pods?labelSelector=app%3Ddb')).map((p) => p.metadata.name).sort()
  t.same(pods, ['db-0', 'db-1'])
  const pvcs = await waitFor('claims bound', async () => { const l = await list('/api/v1/namespaces/default/persistentvolumeclaims'); return l.length === 2 && l.every((c) => c.status.phase === 'Bound') && l })
  t.same(pvcs.map((c) => c.metadata.name).sort(), ['data-db-0', 'data-db-1'])
  const pv = await get(`/api/v1/persistentvolumes/${pvcs[0].spec.volumeName}`)
  t.match(pv, { spec: { claimRef: { name: pvcs[0].metadata.name }, capacity: { storage: '1Gi' } }, status: { phase: 'Bound' } })

  await apply('/apis/apps/v1/namespaces/default/daemonsets/agent', {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' },
    spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'a', image: 'agent:1' }] } } },
  })
  await waitFor('agent ready', async () => (await get('/apis/apps/v1/namespaces/default/daemonsets/agent')).status?.numberReady === 2)
  const nodes = (await list('/api/v1/namespaces/default/pods?labelSelector=app%3Dagent')).map((p) => p.spec.nodeName).sort()
  t.same(nodes, ['kube-sim-node-1', 'kube-sim-node-2'])
})

t.test('Services: ClusterIP, LoadBalancer address, Endpoints of ready pods; Ingress status', async (t) => {
  await apply(`${D}/api`, deployment('api', 'api:1', 2))
  await apply('/api/v1/namespaces/default/services/api', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api' }, spec: { type: 'LoadBalancer', selector: { app: 'api' }, ports: [{ port: 80, targetPort: 8080 }] } })
  const svc = await waitFor('LB ingress', async () => { const s = await get('/api/v1/namespaces/default/services/api'); return s.status?.loadBalancer?.ingress?.[0]?.ip && s })
  t.match(svc.spec.clusterIP, /^10\.96\.\d+\.\d+$/)
  t.ok(svc.spec.ports[0].nodePort >= 30000)
  const ep = await waitFor('two endpoints', async () => { const e = await get('/api/v1/namespaces/default/endpoints/api'); return e?.subsets?.[0]?.addresses?.length === 2 && e })
  t.same(ep.subsets[0].ports, [{ port: 8080, protocol: 'TCP' }])
  await apply(`${D}/api`, deployment('api', 'api:1', 1))
  await waitFor('one endpoint after scale-down', async () => (await get('/api/v1/namespaces/default/endpoints/api'))?.subsets?.[0]?.addresses?.length === 1)

  await apply('/apis/networking.k8s.io/v1/namespaces/default/ingresses/api', { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'api' }, spec: { rules: [{ host: 'api.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 80 } } } }] } }] } })
  await waitFor('ingress address', async () => (await get('/apis/networking.k8s.io/v1/namespaces/default/ingresses/api'))?.status?.loadBalancer?.ingress?.[0]?.ip)
  t.pass('ingress got an address')
})

t.test('HPA scales its target; PDB reports disruptions', async (t) => {
  await apply(`${D}/scaled`, deployment('scaled', 'scaled:1', 1))
  await apply('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/scaled', {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'scaled', annotations: { [utilizationAnnotation]: '200' } },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'scaled' }, minReplicas: 1, maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] },
  })
  await waitFor('scaled to max', async () => (await get(`${D}/scaled`)).spec.replicas === 3)
  const hpa = await waitFor('hpa status', async () => { const h = await get('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/scaled'); return h.status?.desiredReplicas === 3 && h })
  t.match(hpa.status.conditions, [{ type: 'AbleToScale' }, { type: 'ScalingActive', status: 'True' }, { type: 'ScalingLimited', status: 'True', reason: 'TooManyReplicas' }])

  await apply('/apis/policy/v1/namespaces/default/poddisruptionbudgets/scaled', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'scaled' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'scaled' } } } })
  const pdb = await waitFor('pdb', async () => { const p = await get('/apis/policy/v1/namespaces/default/poddisruptionbudgets/scaled'); return p.status?.currentHealthy === 3 && p })
  t.match(pdb.status, { expectedPods: 3, desiredHealthy: 2, disruptionsAllowed: 1 })
})

t.test('deleting a namespace deletes its content first', async (t) => {
  t.equal((await raw(sim, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'doomed' } } })).status, 201)
  await waitFor('default service account', () => get('/api/v1/namespaces/doomed/serviceaccounts/default'))
  await apply('/apis/apps/v1/namespaces/doomed/deployments/x', { ...deployment('x', 'x:1', 1), metadata: { name: 'x', namespace: 'doomed' } })
  await waitFor('x ready', async () => (await get('/apis/apps/v1/namespaces/doomed/deployments/x'))?.status?.readyReplicas === 1)
  // A finalizer we control holds the namespace in Terminating for as long as the test needs.
  t.equal((await raw(sim, 'POST', '/api/v1/namespaces/doomed/configmaps', { body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } })).status, 201)
  const del = await raw(sim, 'DELETE', '/api/v1/namespaces/doomed')
  t.equal(del.status, 200)
  t.equal(del.json.status.phase, 'Terminating')
  const refused = await raw(sim, 'POST', '/api/v1/namespaces/doomed/configmaps', { body: { metadata: { name: 'late' } } })
  t.equal(refused.status, 403, 'no new content in a terminating namespace')
  t.match(refused.json.message, /because it is being terminated/)
  await waitFor('deployment and pods deleted', async () => (await list('/api/v1/namespaces/doomed/pods')).length === 0 && (await list('/apis/apps/v1/namespaces/doomed/deployments')).length === 0)
  const held = await get('/api/v1/namespaces/doomed/configmaps/held')
  t.ok(held.metadata.deletionTimestamp, 'the held object is terminating')
  t.equal((await get('/api/v1/namespaces/doomed')).status.phase, 'Terminating')
  t.equal((await raw(sim, 'PATCH', '/api/v1/namespaces/doomed/configmaps/held', { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' })).status, 200)
  await waitFor('namespace gone', async () => (await raw(sim, 'GET', '/api/v1/namespaces/doomed')).status === 404)
})
