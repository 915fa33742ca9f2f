// deriveStatus per kind family, on objects shaped as the simulator's controllers (and a real API server)
// write them. Pure: no cluster.
import t from 'tap'
import fc from 'fast-check'
import { runs } from '../helpers/seed.ts'
import { deriveStatus, messageKey } from '../../src/kube/status/index.ts'
import { matchesSelector, podSelectorOf, selectorText } from '../../src/kube/status/selector.ts'
import type { KubeObject } from '../../src/manifests/types.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const obj = (apiVersion: string, kind: string, rest: Record<string, any> = {}, meta: Record<string, any> = {}): KubeObject =>
  ({ apiVersion, kind, metadata: { name: 'x', namespace: 'default', ...meta }, ...rest }) as KubeObject
const cond = (type: string, status: string, reason?: string, message?: string) => ({ type, status, reason, message })

const deployment = (replicas: number, status: Record<string, unknown>, meta: Record<string, unknown> = { generation: 1 }) =>
  obj('apps/v1', 'Deployment', { spec: { replicas, selector: { matchLabels: { app: 'web' } } }, status: { observedGeneration: 1, ...status } }, meta)

const pod = (phase: string, containers: Array<Record<string, unknown>>, conditions: unknown[] = [], meta: Record<string, unknown> = {}) =>
  obj('v1', 'Pod', { spec: { nodeName: 'node-1', containers: containers.map((c) => ({ name: c.name, image: 'img' })) }, status: { phase, podIP: '10.0.0.5', conditions, containerStatuses: containers } }, { labels: { app: 'web' }, ...meta })
const crashing = { name: 'web', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 1s restarting failed container' } } }
const runningReady = { name: 'web', ready: true, restartCount: 0, state: { running: { startedAt: '2026-11-23T10:00:00Z' } } }

t.test('Deployment: ready against desired, rollout, deadline, pause', async (t) => {
  t.match(deriveStatus(deployment(3, { replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, conditions: [cond('Available', 'True'), cond('Progressing', 'True', 'NewReplicaSetAvailable')] })),
    { status: 'running', ready: '3/3', counters: { replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 3 } })
  t.match(deriveStatus(deployment(3, { replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1 })), { status: 'pending', ready: '1/3', message: /^1 of 3 replicas available/ })
  t.match(deriveStatus(deployment(2, { replicas: 3, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2 })), { status: 'pending', message: /1 of 2 replicas updated/ })
  t.match(deriveStatus(deployment(2, { replicas: 3, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 3 })), { status: 'pending', message: /old replicas pending termination/ })
  t.match(deriveStatus(deployment(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 0, conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-5d" has timed out progressing.')] })),
    { status: 'failed', message: 'ProgressDeadlineExceeded: ReplicaSet "web-5d" has timed out progressing.', ready: '0/2' })
  t.match(deriveStatus(deployment(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }, { generation: 2 })), { status: 'pending', message: /observe the new spec/ }, 'a status older than the spec says nothing yet')
  t.match(deriveStatus(obj('apps/v1', 'Deployment', { spec: { replicas: 1, paused: true }, status: {} })), { status: 'warning', message: 'rollout paused' })
  t.match(deriveStatus(deployment(0, {})), { status: 'running', ready: '0/0', message: 'scaled to zero' })
  t.match(deriveStatus(obj('apps/v1', 'Deployment', { spec: {} })), { status: 'pending', ready: '0/1' }, 'no status at all: default one replica, none ready')
})

t.test('a workload whose pods cannot start: failed when none is ready, warning when some are', async (t) => {
  const d = deployment(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 0, availableReplicas: 0 })
  t.match(deriveStatus(d), { status: 'pending' }, 'without its pods the object alone says pending')
  t.match(deriveStatus(d, { pods: [pod('Running', [crashing], [], { name: 'web-1' })] }), { status: 'failed', message: /no replica ready: pod web-1 container web: CrashLoopBackOff/ })
  const half = deployment(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 })
  t.match(deriveStatus(half, { pods: [pod('Running', [runningReady], [cond('Ready', 'True')]), pod('Pending', [{ name: 'web', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff' } } }], [], { name: 'web-2' })] }),
    { status: 'warning', ready: '1/2', message: /1\/2 ready: pod web-2 container web: ImagePullBackOff/ })
  t.match(deriveStatus(deployment(1, { replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 }), { pods: [pod('Running', [crashing])] }), { status: 'running' }, 'all desired replicas ready: an extra crashing pod does not count')
  const unschedulable = pod('Pending', [], [cond('PodScheduled', 'False', 'Unschedulable', '0/2 nodes are available: 2 Insufficient cpu.')], { name: 'web-3' })
  t.match(deriveStatus(d, { pods: [unschedulable] }), { status: 'failed', message: 'no replica ready: pod web-3 not scheduled: 0/2 nodes are available: 2 Insufficient cpu.' }, 'an unschedulable pod is a reason too')
  t.match(deriveStatus(d, { pods: [pod('Running', [crashing], [], { name: 'web-1', deletionTimestamp: '2026-11-23T10:00:00Z' })] }), { status: 'pending' }, 'a terminating pod\'s failure is over')
  t.match(deriveStatus(d, { pods: [obj('v1', 'Pod', { status: { phase: 'Failed', reason: 'Evicted' } }, { name: 'web-9' })] }), { status: 'pending' }, 'an evicted (Failed) pod has been replaced: not a reason')
  const many = ['web-e', 'web-a', 'web-d', 'web-c', 'web-b'].map((name) => pod('Running', [crashing], [], { name }))
  t.match(deriveStatus(d, { pods: many }), { status: 'failed', message: /^no replica ready: pod web-a container web: CrashLoopBackOff.*; pod web-b .*; pod web-c .*; and 2 more pods$/ }, 'three pods named, by name, the rest counted')
})

t.test('StatefulSet, DaemonSet, ReplicaSet', async (t) => {
  t.match(deriveStatus(obj('apps/v1', 'StatefulSet', { spec: { replicas: 2 }, status: { replicas: 2, readyReplicas: 2, currentReplicas: 2, updatedReplicas: 2, currentRevision: 'a', updateRevision: 'a' } })), { status: 'running', ready: '2/2', counters: { replicas: 2, readyReplicas: 2 } })
  t.match(deriveStatus(obj('apps/v1', 'StatefulSet', { spec: { replicas: 3 }, status: { replicas: 3, readyReplicas: 3, updatedReplicas: 1, currentRevision: 'a', updateRevision: 'b' } })), { status: 'pending', message: /1 of 3 replicas updated/ })
  t.match(deriveStatus(obj('apps/v1', 'StatefulSet', { spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }, status: { replicas: 3, readyReplicas: 3, updatedReplicas: 1, currentRevision: 'a', updateRevision: 'b' } })), { status: 'running' }, 'a partitioned rollout is done once the ordinals above the partition are updated')
  t.match(deriveStatus(obj('apps/v1', 'DaemonSet', { status: { desiredNumberScheduled: 2, currentNumberScheduled: 2, numberReady: 2, numberAvailable: 2, updatedNumberScheduled: 2 } })), { status: 'running', ready: '2/2', counters: { desiredNumberScheduled: 2, numberReady: 2 } })
  t.match(deriveStatus(obj('apps/v1', 'DaemonSet', { status: { desiredNumberScheduled: 2, numberReady: 1, updatedNumberScheduled: 2 } })), { status: 'pending', ready: '1/2' })
  t.match(deriveStatus(obj('apps/v1', 'DaemonSet', {})), { status: 'pending' }, 'not observed yet')
  t.match(deriveStatus(obj('apps/v1', 'ReplicaSet', { spec: { replicas: 2 }, status: { replicas: 2, readyReplicas: 2, availableReplicas: 2 } })), { status: 'running', ready: '2/2' })
  t.match(deriveStatus(obj('apps/v1', 'ReplicaSet', { spec: { replicas: 2 }, status: { conditions: [cond('ReplicaFailure', 'True', 'FailedCreate', 'pods "x" is forbidden: exceeded quota')] } })), { status: 'failed', message: /FailedCreate: pods "x" is forbidden/ })
})

t.test('Pod: phase, waiting reasons, readiness', async (t) => {
  t.match(deriveStatus(pod('Running', [runningReady], [cond('Ready', 'True')])), { status: 'running', ready: '1/1', counters: { phase: 'Running', restarts: 0, podIP: '10.0.0.5', nodeName: 'node-1' } })
  t.match(deriveStatus(pod('Running', [crashing])), { status: 'failed', message: /container web: CrashLoopBackOff/, counters: { restarts: 4 } })
  t.match(deriveStatus(pod('Pending', [{ name: 'web', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } }])), { status: 'failed', message: 'container web: ErrImagePull: not found' })
  t.match(deriveStatus(pod('Pending', [{ name: 'web', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }])), { status: 'pending', message: 'containers ContainerCreating', ready: '0/1' })
  t.match(deriveStatus(pod('Pending', [], [cond('PodScheduled', 'False', 'Unschedulable', '0/2 nodes are available')])), { status: 'failed', message: 'not scheduled: 0/2 nodes are available' }, 'no node can run it: failed, not pending')
  t.match(deriveStatus(pod('Pending', [], [cond('PodScheduled', 'False', 'SchedulingGated', 'Scheduling is blocked due to non-empty scheduling gates')])), { status: 'pending', message: /not scheduled: Scheduling is blocked/ }, 'a scheduling gate is deliberate: still pending')
  t.match(deriveStatus(pod('Running', [{ name: 'web', ready: false, restartCount: 0, state: { running: {} } }], [cond('Ready', 'False')])), { status: 'pending', message: 'running, 0/1 containers ready' })
  t.match(deriveStatus(pod('Succeeded', [])), { status: 'completed' })
  t.match(deriveStatus(obj('v1', 'Pod', { status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' } })), { status: 'failed', message: 'The node was low on resource: memory.' })
  t.match(deriveStatus(pod('Running', [runningReady], [cond('Ready', 'True')], { deletionTimestamp: '2026-11-23T10:00:00Z' })), { status: 'pending', message: 'terminating' })
})

t.test('Job and CronJob', async (t) => {
  t.match(deriveStatus(obj('batch/v1', 'Job', { spec: { completions: 1 }, status: { succeeded: 1, conditions: [cond('SuccessCriteriaMet', 'True'), cond('Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods')] } })),
    { status: 'completed', ready: '1/1', counters: { succeeded: 1, completions: 1 } })
  t.match(deriveStatus(obj('batch/v1', 'Job', { spec: {}, status: { failed: 7, conditions: [cond('FailureTarget', 'True'), cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')] } })), { status: 'failed', message: 'BackoffLimitExceeded: Job has reached the specified backoff limit' })
  t.match(deriveStatus(obj('batch/v1', 'Job', { spec: { completions: 3 }, status: { active: 2, succeeded: 1 } })), { status: 'running', ready: '1/3', message: '2 pods active, 1/3 completions' })
  t.match(deriveStatus(obj('batch/v1', 'Job', { spec: { suspend: true }, status: {} })), { status: 'warning', message: /suspended/ })
  t.match(deriveStatus(obj('batch/v1', 'Job', { spec: {} })), { status: 'pending' })
  const cj = (spec: Record<string, unknown>, status: Record<string, unknown> = {}) => deriveStatus(obj('batch/v1', 'CronJob', { spec: { schedule: '*/5 * * * *', ...spec }, status }))
  t.match(cj({}), { status: 'running', message: 'waiting for its first schedule (*/5 * * * *)', counters: { active: 0, schedule: '*/5 * * * *' } })
  t.match(cj({ suspend: true }), { status: 'warning', message: /suspended/ })
  t.match(cj({}, { active: [{ name: 'j1' }] }), { status: 'running', message: '1 job active' })
  t.match(cj({}, { lastScheduleTime: '2026-11-23T10:05:00Z', lastSuccessfulTime: '2026-11-23T10:05:03Z' }), { status: 'running', message: 'last scheduled at 2026-11-23T10:05:00Z' })
  t.match(cj({}, { lastScheduleTime: '2026-11-23T10:10:00Z', lastSuccessfulTime: '2026-11-23T10:05:03Z' }), { status: 'warning', message: /10:10:00Z did not succeed/ })
})

t.test('Service, Ingress, NetworkPolicy', async (t) => {
  t.match(deriveStatus(obj('v1', 'Service', { spec: { type: 'ClusterIP', clusterIP: '10.96.0.12', ports: [{ port: 80 }] } })), { status: 'running', ready: null, counters: { type: 'ClusterIP', clusterIP: '10.96.0.12', externalIP: null, ports: 1 } })
  t.match(deriveStatus(obj('v1', 'Service', { spec: { type: 'LoadBalancer', clusterIP: '10.96.0.13' }, status: { loadBalancer: {} } })), { status: 'pending', message: 'waiting for a load-balancer address' })
  t.match(deriveStatus(obj('v1', 'Service', { spec: { type: 'LoadBalancer', clusterIP: '10.96.0.13' }, status: { loadBalancer: { ingress: [{ ip: '172.18.0.10', ipMode: 'VIP' }] } } })), { status: 'running', counters: { externalIP: '172.18.0.10' } })
  t.match(deriveStatus(obj('v1', 'Service', { spec: { clusterIP: 'None' } })), { status: 'running', message: 'headless' })
  t.match(deriveStatus(obj('networking.k8s.io/v1', 'Ingress', { spec: { rules: [{ host: 'a.example' }] } })), { status: 'pending', counters: { externalIP: null, hosts: 'a.example' } })
  t.match(deriveStatus(obj('networking.k8s.io/v1', 'Ingress', { spec: {}, status: { loadBalancer: { ingress: [{ hostname: 'lb.example' }] } } })), { status: 'running', counters: { externalIP: 'lb.example' } })
  t.match(deriveStatus(obj('networking.k8s.io/v1', 'NetworkPolicy', { spec: { policyTypes: ['Ingress'] } })), { status: 'running', counters: { policyTypes: 'Ingress' } })
})

t.test('PersistentVolumeClaim, HPA, PDB', async (t) => {
  const pvc = (phase?: string) => deriveStatus(obj('v1', 'PersistentVolumeClaim', { spec: { resources: { requests: { storage: '1Gi' } }, volumeName: phase === 'Bound' ? 'pvc-1' : undefined }, status: phase ? { phase, capacity: phase === 'Bound' ? { storage: '1Gi' } : undefined } : {} }))
  t.match(pvc('Bound'), { status: 'running', counters: { phase: 'Bound', capacity: '1Gi', volumeName: 'pvc-1' } })
  t.match(pvc('Pending'), { status: 'pending' })
  t.match(pvc(), { status: 'pending' })
  t.match(pvc('Lost'), { status: 'failed' })
  const hpa = (conditions: unknown[], status: Record<string, unknown> = {}) => deriveStatus(obj('autoscaling/v2', 'HorizontalPodAutoscaler', { spec: { minReplicas: 1, maxReplicas: 5 }, status: { currentReplicas: 2, desiredReplicas: 2, conditions, ...status } }))
  t.match(hpa([]), { status: 'pending' })
  t.match(hpa([cond('AbleToScale', 'True'), cond('ScalingActive', 'True', 'ValidMetricFound')], { currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40 } } }] }),
    { status: 'running', counters: { currentReplicas: 2, minReplicas: 1, maxReplicas: 5, currentCPUUtilization: 40 } })
  t.match(hpa([cond('AbleToScale', 'True'), cond('ScalingActive', 'False', 'FailedGetResourceMetric', 'failed to get cpu utilization')]), { status: 'warning', message: /FailedGetResourceMetric/ })
  t.match(hpa([cond('AbleToScale', 'False', 'FailedGetScale', 'Deployment/web not found')]), { status: 'failed' })
  const pdb = (status: Record<string, unknown>) => deriveStatus(obj('policy/v1', 'PodDisruptionBudget', { spec: { minAvailable: 1 }, status }))
  t.match(pdb({ currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1, expectedPods: 2 }), { status: 'running', message: '1 disruption allowed' })
  t.match(pdb({ currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 0, expectedPods: 1 }), { status: 'running' }, 'a budget allowing no disruption is still met')
  t.match(pdb({ currentHealthy: 0, desiredHealthy: 1, disruptionsAllowed: 0, expectedPods: 1 }), { status: 'warning' })
  t.match(pdb({}), { status: 'pending' })
})

t.test('objects that work once they exist; a Secret\'s data is never read', async (t) => {
  t.match(deriveStatus(obj('v1', 'ConfigMap', { data: { a: '1', b: '2' } })), { status: 'running', counters: { keys: 2 } })
  t.match(deriveStatus(obj('v1', 'ServiceAccount')), { status: 'running' })
  t.match(deriveStatus(obj('v1', 'Namespace', { status: { phase: 'Active' } }, { namespace: undefined })), { status: 'running' })
  t.match(deriveStatus(obj('v1', 'Namespace', { status: { phase: 'Terminating' } })), { status: 'pending', message: /terminating/ })
  const secret = obj('v1', 'Secret', { type: 'Opaque' })
  Object.defineProperty(secret, 'data', { enumerable: true, get: () => { throw new Error('Secret data was read') } })
  Object.defineProperty(secret, 'stringData', { enumerable: false, get: () => { throw new Error('Secret stringData was read') } })
  t.match(deriveStatus(secret), { status: 'running', counters: { type: 'Opaque' } })
})

t.test('custom resources: Ready or Available, else unknown; a custom kind named like a built-in is not misread', async (t) => {
  t.match(deriveStatus(obj('example.io/v1', 'Database', { status: { conditions: [cond('Ready', 'True', 'Ok', 'serving')] } })), { status: 'running', message: 'Ready: serving' })
  t.match(deriveStatus(obj('example.io/v1', 'Database', { status: { conditions: [cond('Ready', 'False', 'Reconciling', 'creating replicas')] } })), { status: 'pending' })
  t.match(deriveStatus(obj('example.io/v1', 'Database', { status: { conditions: [cond('Ready', 'False', 'InvalidSpec', 'storage class missing')] } })), { status: 'failed', message: 'InvalidSpec: storage class missing' })
  t.match(deriveStatus(obj('example.io/v1', 'Database', { status: { conditions: [cond('Available', 'True')] } })), { status: 'running' })
  t.match(deriveStatus(obj('example.io/v1', 'Database', { status: { conditions: [cond('Ready', 'Unknown')] } })), { status: 'pending' })
  t.match(deriveStatus(obj('example.io/v1', 'Database')), { status: 'unknown' })
  t.match(deriveStatus(obj('example.io/v1', 'Deployment', { spec: { replicas: 3 } })), { status: 'unknown' }, 'judged by conditions, not as apps/v1 Deployment')
  t.match(deriveStatus(obj('example.io/v1', 'Database', { status: { conditions: [cond('Ready', 'True')] } }, { deletionTimestamp: '2026-11-23T10:00:00Z' })), { status: 'pending', message: 'terminating' })
})

t.test('selectors: text, in-memory match, and where each kind keeps its own', async (t) => {
  const sel = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }, { key: 'canary', operator: 'DoesNotExist' }, { key: 'zone', operator: 'Exists' }, { key: 'x', operator: 'NotIn', values: ['1'] }] }
  t.equal(selectorText(sel), 'app=web,tier in (a,b),!canary,zone,x notin (1)')
  t.ok(matchesSelector({ app: 'web', tier: 'a', zone: 'z' }, sel))
  t.notOk(matchesSelector({ app: 'web', tier: 'c', zone: 'z' }, sel))
  t.notOk(matchesSelector({ app: 'web', tier: 'a', zone: 'z', canary: '1' }, sel))
  t.notOk(matchesSelector({ app: 'web', tier: 'a' }, sel))
  t.notOk(matchesSelector({ app: 'web', tier: 'a', zone: 'z', x: '1' }, sel))
  t.same(podSelectorOf('Service', { selector: { app: 'web' } }), { matchLabels: { app: 'web' } })
  t.equal(podSelectorOf('Service', { type: 'ExternalName' }), null)
  t.same(podSelectorOf('Deployment', { selector: { matchLabels: { app: 'web' } } }), { matchLabels: { app: 'web' } })
  t.equal(podSelectorOf('Deployment', { selector: {} }), null, 'an empty selector selects nothing here (never every pod)')
})

t.test('messageKey: ticking numbers are the same condition, another condition is a new key', async (t) => {
  const crash = (restarts: number, waiting: boolean) => deriveStatus(deployment(2, { replicas: 2, updatedReplicas: 2 }), { pods: [pod('Running', [{
    name: 'web', ready: false, restartCount: restarts,
    state: waiting ? { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${10 * restarts}s restarting failed container=web pod=web-1_default(5e1c)` } } : { running: {} },
    lastState: { terminated: { exitCode: 1, reason: 'Error' } },
  }], [], { name: 'web-1' })] }).message
  t.equal(messageKey(crash(3, true)), messageKey(crash(4, true)), 'a restart count and back-off seconds ticking')
  t.equal(messageKey(crash(3, true)), messageKey(crash(3, false)), 'waiting out a back-off or running between two: one condition')
  t.equal(crash(3, true), 'no replica ready: pod web-1 container web: CrashLoopBackOff: restarted 3 times, last exit Error (code 1)')
  t.equal(messageKey('rollout stuck: pod web-b-1 container web: ErrImagePull: failed to pull and unpack image "nginx:fail-pull": not found; 2/2 old replicas still serve'),
    messageKey('rollout stuck: pod web-b-1 container web: ImagePullBackOff: Back-off pulling image "nginx:fail-pull"; 1/2 old replicas still serve'), 'the kubelet alternating the two reasons of one failing pull')
  t.equal(messageKey('rollout: 1 of 3 replicas updated'), messageKey('rollout: 2 of 3 replicas updated'))
  t.equal(messageKey('not scheduled: 0/2 nodes are available: 2 Insufficient cpu.'), messageKey('not scheduled: 0/3 nodes are available: 3 Insufficient cpu.'))
  const distinct = [
    'waiting for the controller to observe the new spec', 'rollout: 1 of 3 replicas updated', '1 of 3 replicas available',
    'rollout: 1 old replicas pending termination', 'no replica ready: pod web-1 container web: CrashLoopBackOff: restarted 3 times, last exit Error (code 1)',
    'no replica ready: pod web-1 container web: CrashLoopBackOff: restarted 3 times, last exit OOMKilled (code 137)',
    'no replica ready: pod web-1 container sidecar: CrashLoopBackOff: restarted 3 times, last exit Error (code 1)',
    'no replica ready: pod web-1 container web: CreateContainerConfigError: secret "db" not found',
    'no replica ready: pod web-1 container web: ImagePullBackOff: Back-off pulling image "nginx:fail-pull"',
    'rollout stuck: pod web-b-1 container web: ImagePullBackOff: Back-off pulling image "nginx:fail-pull"; 2/2 old replicas still serve',
    'rollout stuck: pod web-b-1 container web: ImagePullBackOff: Back-off pulling image "nginx:fail-pull"; no old replica serves',
    'not scheduled: 0/2 nodes are available: 2 Insufficient cpu.', 'not scheduled: 0/2 nodes are available: 2 node(s) had untolerated taint',
    '2/3 replicas ready', 'scaled to zero', 'terminating',
  ]
  t.equal(new Set(distinct.map(messageKey)).size, distinct.length, 'each condition its own key')
  // Any message, any numbers put into it: the same key; a different word beside them: another key.
  fc.assert(fc.property(fc.array(fc.stringMatching(/^[a-z :;/()"-]{0,12}$/), { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { minLength: 5, maxLength: 5 }), fc.array(fc.nat(), { minLength: 5, maxLength: 5 }),
    (words, a, b) => {
      const fill = (n: number[]) => words.map((w, i) => `${w}${n[i]}`).join(' ')
      return messageKey(fill(a)) === messageKey(fill(b)) && messageKey(`${fill(a)} Error`) !== messageKey(`${fill(b)} OOMKilled`)
    }), { numRuns: runs(300) })
})
