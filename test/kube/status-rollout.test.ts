// A rollout whose new pods cannot start reads `failed` although the old pods still serve; which pods are new
// is read from the pods alone (src/kube/status/revisions.ts). Pods and workloads are shaped as the API
// server returns them: templates and pods defaulted, admission additions on the pods.
import t from 'tap'
import { deriveStatus } from '../../src/kube/status/index.ts'
import { contains, splitByTemplate } from '../../src/kube/status/revisions.ts'
import type { KubeObject } from '../../src/manifests/types.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>
const cond = (type: string, status: string, reason?: string, message?: string) => ({ type, status, reason, message })

const container = (image: string, extra: Any = {}): Any => ({ name: 'web', image, imagePullPolicy: 'IfNotPresent', ports: [{ containerPort: 80, protocol: 'TCP' }], terminationMessagePath: '/dev/termination-log', ...extra })
const template = (c: Any, annotations?: Record<string, string>): Any => ({ metadata: { creationTimestamp: null, labels: { app: 'web' }, ...(annotations ? { annotations } : {}) }, spec: { containers: [c], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' } })

const deployment = (tmpl: Any, status: Any, replicas = 2): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', generation: 2 },
  spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: tmpl },
  status: { observedGeneration: 2, ...status },
}) as KubeObject

const readyState = { ready: true, restartCount: 0, state: { running: { startedAt: '2026-11-23T10:00:01Z' } } }
const pullBackOff = { ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nginx:fail-pull"' } } }
const crashLoop = (restarts: number, waiting = true) => ({
  ready: false, restartCount: restarts,
  state: waiting ? { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${10 * 2 ** restarts}s restarting failed container=web pod=web-b-1_default(0d4f)` } } : { running: { startedAt: '2026-11-23T10:05:09Z' } },
  lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: '2026-11-23T10:05:01Z', finishedAt: '2026-11-23T10:05:02Z' } },
})

/** A pod made from `tmpl` as a ReplicaSet makes it: labels, template-hash, admission's token volume and defaults. */
function podOf(tmpl: Any, name: string, hash: string, created: string, state: Any, extra: Any = {}): KubeObject {
  const spec = structuredClone(tmpl.spec)
  spec.containers = spec.containers.map((c: Any) => ({ ...c, resources: c.resources ?? {}, volumeMounts: [...(c.volumeMounts ?? []), { name: 'kube-api-access-x1', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }] }))
  spec.volumes = [...(spec.volumes ?? []), { name: 'kube-api-access-x1', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }]
  Object.assign(spec, { nodeName: 'node-1', serviceAccountName: 'default', tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] }, extra.spec ?? {})
  const ready = state.ready === true
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', creationTimestamp: created, labels: { ...tmpl.metadata.labels, 'pod-template-hash': hash }, ...(tmpl.metadata.annotations ? { annotations: tmpl.metadata.annotations } : {}), ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${hash}`, uid: hash, controller: true }], ...(extra.metadata ?? {}) },
    spec,
    status: { phase: state.state?.waiting && !state.lastState ? 'Pending' : 'Running', conditions: [cond('PodScheduled', 'True'), cond('Ready', ready ? 'True' : 'False')], containerStatuses: [{ name: 'web', image: spec.containers[0].image, ...state }], ...(extra.status ?? {}) },
  } as KubeObject
}

const good = template(container('nginx:1.27'))
const oldPods = [podOf(good, 'web-a-1', 'a', '2026-11-23T10:00:00Z', readyState), podOf(good, 'web-a-2', 'a', '2026-11-23T10:00:00Z', readyState)]
// What the deployment controller reports one surge pod into a rollout of 2 replicas (maxSurge 25% → 1, maxUnavailable 25% → 0).
const surging = { replicas: 3, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2, unavailableReplicas: 1 }

t.test('kubectl set image to an image that cannot be pulled: failed, naming the new pod, while the old ones serve', async (t) => {
  const bad = template(container('nginx:fail-pull'))
  const d = deployment(bad, surging)
  const pods = [...oldPods, podOf(bad, 'web-b-1', 'b', '2026-11-23T10:05:00Z', pullBackOff)]
  t.same(deriveStatus(d, { pods }), {
    status: 'failed', ready: '2/2', counters: { replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 1 },
    message: 'rollout stuck: pod web-b-1 container web: ImagePullBackOff: Back-off pulling image "nginx:fail-pull"; 2/2 old replicas still serve',
  })
  t.match(deriveStatus(d), { status: 'pending', message: 'rollout: 1 of 2 replicas updated' }, 'without its pods the object alone cannot tell')
  const errPull = podOf(bad, 'web-b-1', 'b', '2026-11-23T10:05:00Z', { ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull', message: 'failed to pull and unpack image "nginx:fail-pull": not found' } } })
  t.match(deriveStatus(d, { pods: [...oldPods, errPull] }), { status: 'failed', message: /^rollout stuck: pod web-b-1 container web: ErrImagePull: failed to pull/ }, 'on the first failed pull already')
  t.match(deriveStatus(d, { pods: [...oldPods, podOf(bad, 'web-b-1', 'b', '2026-11-23T10:05:00Z', { ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } })] }),
    { status: 'pending', message: 'rollout: 1 of 2 replicas updated' }, 'a new pod still starting is not a failure')
  const oldCrashing = oldPods.map((p) => podOf(good, String(p.metadata.name), 'a', '2026-11-23T10:00:00Z', crashLoop(3)))
  t.match(deriveStatus(deployment(bad, { ...surging, readyReplicas: 0, availableReplicas: 0 }), { pods: [...oldCrashing, podOf(bad, 'web-b-1', 'b', '2026-11-23T10:05:00Z', pullBackOff)] }),
    { status: 'failed', message: /^rollout stuck: pod web-b-1 container web: ImagePullBackOff.*; no old replica serves$/ })
})

t.test('a crash-looping new revision is failed while it waits out a back-off and while it runs between two', async (t) => {
  const bad = template(container('nginx:crashloop'))
  const d = deployment(bad, surging)
  for (const waiting of [true, false]) {
    t.same(deriveStatus(d, { pods: [...oldPods, podOf(bad, 'web-b-1', 'b', '2026-11-23T10:05:00Z', crashLoop(4, waiting))] }).message,
      'rollout stuck: pod web-b-1 container web: CrashLoopBackOff: restarted 4 times, last exit Error (code 1); 2/2 old replicas still serve', waiting ? 'waiting' : 'running')
  }
})

t.test('which pods are new when the images are the same: the template decides (env, annotation), then the newest pods', async (t) => {
  const withSecret = template(container('nginx:1.27', { env: [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }] }))
  const configError = { ready: false, restartCount: 0, state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "db" not found' } } }
  // Newest first in the list, and an old pod recreated after an eviction is newer than the bad one: the template decides.
  const evictedReplacement = podOf(good, 'web-a-3', 'a', '2026-11-23T10:06:00Z', readyState)
  t.match(deriveStatus(deployment(withSecret, surging), { pods: [evictedReplacement, podOf(withSecret, 'web-b-1', 'b', '2026-11-23T10:05:00Z', configError), oldPods[0]] }),
    { status: 'failed', message: 'rollout stuck: pod web-b-1 container web: CreateContainerConfigError: secret "db" not found; 2/2 old replicas still serve' })

  const restarted = template(container('nginx:1.27'), { 'kubectl.kubernetes.io/restartedAt': '2026-11-23T10:04:59Z' })
  const noNode = { ready: false, restartCount: 0 }
  const unschedulable = podOf(restarted, 'web-b-1', 'b', '2026-11-23T10:05:00Z', noNode, { spec: { nodeName: undefined }, status: { phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'Unschedulable', '0/2 nodes are available: 2 Insufficient cpu.')], containerStatuses: undefined } })
  t.match(deriveStatus(deployment(restarted, surging), { pods: [...oldPods, unschedulable] }),
    { status: 'failed', message: 'rollout stuck: pod web-b-1 not scheduled: 0/2 nodes are available: 2 Insufficient cpu.; 2/2 old replicas still serve' }, 'kubectl rollout restart: the annotation tells; a surge pod with no room is stuck')

  // A VPA rewrote the pods' requests: no group carries the template, the newest pods are the new revision.
  const bigger = template(container('nginx:1.27', { resources: { requests: { cpu: '2' } } }))
  const vpa = (p: KubeObject) => { (p.spec as Any).containers[0].resources = { requests: { cpu: '150m' } }; return p }
  const vpaOld = oldPods.map((p) => vpa(structuredClone(p)))
  t.match(deriveStatus(deployment(bigger, surging), { pods: [...vpaOld, vpa(podOf(bigger, 'web-b-1', 'b', '2026-11-23T10:05:00Z', crashLoop(2)))] }), { status: 'failed', message: /^rollout stuck: pod web-b-1 container web: CrashLoopBackOff/ })
  // ... and when the newest pods of both groups were created in the same second, the pods cannot tell: no rollout verdict.
  t.match(deriveStatus(deployment(bigger, surging), { pods: [...vpaOld, vpa(podOf(bigger, 'web-b-1', 'b', '2026-11-23T10:00:00Z', crashLoop(2)))] }), { status: 'pending', message: 'rollout: 1 of 2 replicas updated' })
})

t.test('rolling back: the stuck pods of the abandoned revision are old now, and a fix rolling out is not a stuck rollout', async (t) => {
  const bad = template(container('nginx:fail-pull'))
  const stuck = podOf(bad, 'web-b-1', 'b', '2026-11-23T10:05:00Z', pullBackOff)
  // `kubectl rollout undo`: the template is the good one again; the old ReplicaSet has made no new pod.
  t.match(deriveStatus(deployment(good, { replicas: 3, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }), { pods: [...oldPods, stuck] }),
    { status: 'pending', message: 'rollout: 1 old replicas pending termination' }, 'newest pod is the abandoned one, the template says it is old')
  // Old pods crash-looping, the new (fixed) revision starting: the old pods' failure is not the rollout's.
  const fixed = template(container('nginx:1.28'))
  const oldCrashing = oldPods.map((p) => podOf(good, String(p.metadata.name), 'a', '2026-11-23T10:00:00Z', crashLoop(3)))
  const starting = podOf(fixed, 'web-c-1', 'c', '2026-11-23T10:07:00Z', { ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } })
  t.match(deriveStatus(deployment(fixed, { replicas: 3, updatedReplicas: 1 }), { pods: [...oldCrashing, starting] }), { status: 'failed', message: /^no replica ready: pod web-a-1 container web: CrashLoopBackOff/ })
  t.match(deriveStatus(deployment(fixed, { replicas: 3, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 }), { pods: [oldCrashing[0], oldPods[1], starting] }), { status: 'warning', message: /^1\/2 ready: pod web-a-1 container web: CrashLoopBackOff/ })
})

t.test('the rollout verdict needs old pods still there; a finished rollout with some pods failing is degraded', async (t) => {
  const bad = template(container('nginx:crashloop'))
  const newPods = [podOf(bad, 'web-b-1', 'b', '2026-11-23T10:05:00Z', crashLoop(2)), podOf(bad, 'web-b-2', 'b', '2026-11-23T10:05:00Z', crashLoop(2))]
  const terminatingOld = oldPods.map((p) => ({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-11-23T10:05:30Z' } }) as KubeObject)
  t.match(deriveStatus(deployment(bad, { replicas: 2, updatedReplicas: 2 }), { pods: [...terminatingOld, ...newPods] }), { status: 'failed', message: /^no replica ready: pod web-b-1 .*; pod web-b-2 / })
  t.match(deriveStatus(deployment(bad, { replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 }), { pods: [newPods[0], podOf(bad, 'web-b-3', 'b', '2026-11-23T10:05:00Z', readyState)] }), { status: 'warning', message: /^1\/2 ready: pod web-b-1 / })
  const five = ['1', '2', '3', '4', '5'].map((i) => podOf(bad, `web-b-${i}`, 'b', '2026-11-23T10:05:00Z', crashLoop(1)))
  t.match(deriveStatus(deployment(bad, { replicas: 7, updatedReplicas: 5, readyReplicas: 2, availableReplicas: 2 }, 5), { pods: [...oldPods, ...five] }),
    { status: 'failed', message: /^rollout stuck: pod web-b-1 .*; pod web-b-2 .*; pod web-b-3 .*; and 2 more pods; 2\/5 old replicas still serve$/ })
})

t.test('the progress deadline names the pods behind it', async (t) => {
  const bad = template(container('nginx:fail-pull'))
  const d = deployment(bad, { ...surging, conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-b" has timed out progressing.')] })
  t.match(deriveStatus(d, { pods: [...oldPods, podOf(bad, 'web-b-1', 'b', '2026-11-23T10:05:00Z', pullBackOff)] }),
    { status: 'failed', message: 'ProgressDeadlineExceeded: ReplicaSet "web-b" has timed out progressing. (pod web-b-1 container web: ImagePullBackOff: Back-off pulling image "nginx:fail-pull")' })
})

t.test('StatefulSet: the pod revision label against updateRevision', async (t) => {
  const sts = (status: Any) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'default', generation: 2 }, spec: { replicas: 3, template: good }, status: { observedGeneration: 2, ...status } }) as KubeObject
  const member = (i: number, rev: string, state: Any) => {
    const p = podOf(good, `db-${i}`, 'x', '2026-11-23T10:00:00Z', state)
    ;(p.metadata as Any).labels = { app: 'web', 'controller-revision-hash': rev, 'statefulset.kubernetes.io/pod-name': `db-${i}` }
    return p
  }
  const rolling = { replicas: 3, readyReplicas: 2, currentReplicas: 2, updatedReplicas: 1, currentRevision: 'db-a', updateRevision: 'db-b' }
  t.match(deriveStatus(sts(rolling), { pods: [member(0, 'db-a', readyState), member(1, 'db-a', readyState), member(2, 'db-b', pullBackOff)] }),
    { status: 'failed', message: 'rollout stuck: pod db-2 container web: ImagePullBackOff: Back-off pulling image "nginx:fail-pull"; 2/3 old replicas still serve' })
  t.match(deriveStatus(sts(rolling), { pods: [member(0, 'db-b', pullBackOff), member(1, 'db-a', readyState), member(2, 'db-b', readyState)] }),
    { status: 'failed', message: /^rollout stuck: pod db-0 / }, 'a pod below a partition… or any new-revision pod')
  t.match(deriveStatus(sts({ ...rolling, readyReplicas: 1 }), { pods: [member(0, 'db-a', crashLoop(2)), member(1, 'db-a', readyState), member(2, 'db-b', { ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } })] }),
    { status: 'warning', message: /^1\/3 ready: pod db-0 container web: CrashLoopBackOff/ }, 'an old pod failing is not the rollout\'s failure')
  t.match(deriveStatus(sts({ replicas: 3, readyReplicas: 2, currentRevision: 'db-b', updateRevision: 'db-b' }), { pods: [member(0, 'db-b', readyState), member(1, 'db-b', readyState), member(2, 'db-b', pullBackOff)] }),
    { status: 'warning', message: /^2\/3 ready: pod db-2 / }, 'no update under way: one revision, degraded')
})

t.test('DaemonSet: the template decides between its revisions', async (t) => {
  const bad = template(container('nginx:fail-pull'))
  const ds = { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent', namespace: 'default', generation: 2 }, spec: { template: bad }, status: { observedGeneration: 2, desiredNumberScheduled: 2, currentNumberScheduled: 2, numberReady: 1, numberAvailable: 1, updatedNumberScheduled: 1 } } as KubeObject
  const member = (name: string, tmpl: Any, rev: string, state: Any) => {
    const p = podOf(tmpl, name, 'x', '2026-11-23T10:00:00Z', state)
    ;(p.metadata as Any).labels = { app: 'web', 'controller-revision-hash': rev, 'pod-template-generation': rev === 'r2' ? '2' : '1' }
    return p
  }
  t.match(deriveStatus(ds, { pods: [member('agent-x', good, 'r1', readyState), member('agent-y', bad, 'r2', pullBackOff)] }),
    { status: 'failed', message: /^rollout stuck: pod agent-y container web: ImagePullBackOff.*; 1\/2 old replicas still serve$/ })
})

t.test('contains: what a pod made from a template holds', async (t) => {
  const tmpl = { containers: [{ name: 'web', image: 'nginx:1.27', args: ['--port', '80'], env: [{ name: 'A', value: '1' }] }] }
  const pod = { containers: [{ name: 'istio-proxy', image: 'istio/proxyv2' }, { name: 'web', image: 'nginx:1.27', args: ['--port', '80'], env: [{ name: 'INJECTED', value: 'x' }, { name: 'A', value: '1' }], volumeMounts: [{ name: 'token' }] }], nodeName: 'n1' }
  t.ok(contains(pod, tmpl), 'admission additions (sidecar, env, mounts, node) keep the match')
  t.notOk(contains(pod, { containers: [{ name: 'web', image: 'nginx:1.28' }] }), 'another image')
  t.notOk(contains(pod, { containers: [{ name: 'web', args: ['80', '--port'] }] }), 'arguments in another order mean something else')
  t.notOk(contains(pod, { containers: [{ name: 'web', env: [{ name: 'A', value: '2' }] }] }), 'another env value')
  t.ok(contains({ a: 1 }, { b: null, c: undefined, d: [] }), 'nothing wanted, nothing to hold')
  t.notOk(contains({ a: 'x' }, { a: { b: 1 } }))
  t.equal(splitByTemplate(good, oldPods, 'pod-template-hash'), null, 'one revision: no split')
})
