// Checks against the cluster of the workflow's last run, read-only: does each object of the node exist,
// is it ready, does a service reach ready pods on the right port, which warning events were recorded, is a
// custom resource's API served. Any failure to read turns all of them into one warning that says why, in
// words built from status codes (never the cluster's raw error text).
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from '../../kube/client.ts'
import { deriveStatus, groupOf, type ResourceStatus } from '../../kube/status/index.ts'
import { podSelectorOf, selectorText } from '../../kube/status/selector.ts'
import { describeClusterError, withTimeout } from '../../kube/upstream-errors.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, NODE_ID_ANNOTATION } from '../../manifests/metadata.ts'
import type { KubeObject } from '../../manifests/types.ts'
import { pass, problem, type Check } from './types.ts'

type Loose = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export interface LiveTarget {
  kc: KubeConfig
  /** The cluster's name, for messages. */
  cluster: string
  nodeId: string
  nodeType: string
  /** The node's objects rendered as the last run deployed them (its namespace), without Namespace objects. */
  objects: KubeObject[]
  timeoutMs: number
}

export interface LiveReport {
  checks: Check[]
  /** The digest of the node's image as its running pods report it, when they do. */
  imageDigest: string | null
}

/** Warning events older than this are history, not diagnosis. */
export const RECENT_EVENTS_MS = 60 * 60 * 1000
/** Pods whose events are read, per object. */
const POD_EVENT_LIMIT = 5

/** Kinds that work as soon as they exist: `exists` says all there is (a service's readiness is its endpoints). */
const PRESENT_IS_READY = new Set(['ConfigMap', 'Secret', 'ServiceAccount', 'NetworkPolicy'])

const notFound = (err: unknown) => err instanceof Error && (err as { code?: unknown }).code === 404

const STATUS_CHECK: Record<ResourceStatus, Check['status']> = {
  running: 'pass', completed: 'pass', unknown: 'pass', pending: 'warning', warning: 'warning', failed: 'error', deleted: 'error',
}

class Reader {
  private constructor(private readonly clients: Loose, private readonly timeoutMs: number) {}

  static async open(kc: KubeConfig, timeoutMs: number): Promise<Reader> {
    const { KubernetesObjectApi, CoreV1Api, CustomObjectsApi } = await k8s()
    return new Reader({ objects: KubernetesObjectApi.makeApiClient(kc), core: kc.makeApiClient(CoreV1Api), custom: kc.makeApiClient(CustomObjectsApi) }, timeoutMs)
  }

  private call<T>(p: Promise<T>): Promise<T> { return withTimeout(p, this.timeoutMs) }

  async read(o: KubeObject): Promise<Loose | null> {
    const ref = { apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, ...(o.metadata.namespace && { namespace: o.metadata.namespace }) } }
    try { return await this.call(this.clients.objects.read(ref)) } catch (err) { if (notFound(err)) return null; throw err }
  }

  async served(apiVersion: string, kind: string): Promise<boolean> {
    const group = groupOf(apiVersion)
    const version = apiVersion.slice(apiVersion.lastIndexOf('/') + 1)
    try {
      const list = await this.call(this.clients.custom.getAPIResources({ group, version })) as Loose
      return (list.resources ?? []).some((r: Loose) => r.kind === kind)
    } catch (err) { if (notFound(err)) return false; throw err }
  }

  async pods(namespace: string, selector: string): Promise<Loose[]> {
    return ((await this.call(this.clients.core.listNamespacedPod({ namespace, labelSelector: selector }))) as Loose).items ?? []
  }

  async endpoints(namespace: string, name: string): Promise<Loose | null> {
    try { return await this.call(this.clients.core.readNamespacedEndpoints({ namespace, name })) } catch (err) { if (notFound(err)) return null; throw err }
  }

  async events(namespace: string, name: string): Promise<Loose[]> {
    const fieldSelector = `involvedObject.name=${name},involvedObject.namespace=${namespace}`
    return ((await this.call(this.clients.core.listNamespacedEvent({ namespace, fieldSelector }))) as Loose).items ?? []
  }
}

const ref = (o: { kind: string; metadata: { name: string; namespace?: string } }) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`
const oneLine = (s: unknown, max = 200) => String(s ?? '').replace(/\s+/g, ' ').trim().slice(0, max)

function podsSelectorOf(live: Loose): string | null {
  if (live.kind === 'Pod' || live.kind === 'CronJob') return null
  const s = podSelectorOf(live.kind, live.spec)
  return s ? selectorText(s) : null
}

function readiness(live: Loose, pods: Loose[]): Check {
  const derived = deriveStatus(live as KubeObject, { pods: pods as KubeObject[] })
  const status = STATUS_CHECK[derived.status]
  const message = `${ref(live as KubeObject)} is ${derived.status}${derived.ready ? ` (${derived.ready} ready)` : ''}: ${oneLine(derived.message)}`
  if (status === 'pass') return pass('ready', message)
  return problem('ready', status, message, 'read the warning events and the pods\' logs: an image that cannot be pulled, a crashing command or a failing readiness probe keep pods from becoming ready; correct the node and run again')
}

function warningEvents(subject: KubeObject, events: Loose[], now: number): Check {
  const recent = events.filter((e) => e.type === 'Warning').map((e) => ({ e, at: Date.parse(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp ?? '') }))
    .filter(({ at }) => Number.isFinite(at) && now - at <= RECENT_EVENTS_MS).sort((a, b) => b.at - a.at)
  if (recent.length === 0) return pass('events', `no warning events for ${ref(subject)} in the last hour`)
  const shown = recent.slice(0, 3).map(({ e }) => `${e.reason ?? 'Warning'} on ${e.involvedObject?.kind ?? ''} ${e.involvedObject?.name ?? ''}${(e.count ?? 1) > 1 ? ` (×${e.count})` : ''}: ${oneLine(e.message, 160)}`)
  return problem('events', 'warning', `${recent.length} warning event${recent.length > 1 ? 's' : ''} in the last hour: ${shown.join('; ')}`, 'the events name what Kubernetes could not do (pull the image, pass a probe, schedule a pod); correct that in the node and run again')
}

function containerPorts(pods: Loose[]): Array<{ port: number; name?: string }> {
  return pods.flatMap((p) => (p.spec?.containers ?? []).flatMap((c: Loose) => (c.ports ?? []).map((x: Loose) => ({ port: x.containerPort, name: x.name }))))
}

function serviceChecks(live: Loose, pods: Loose[], endpoints: Loose | null, selector: string): Check[] {
  const out: Check[] = []
  if (pods.length === 0) {
    out.push(problem('selector-pods', 'error', `the selector ${selector} matches no pods in namespace ${live.metadata.namespace}`, 'connect the workload whose pods the service should reach, or correct its selector', 'selector-mismatch'))
  } else {
    out.push(pass('selector-pods', `the selector matches ${pods.length} pod${pods.length > 1 ? 's' : ''}`))
  }
  const subsets: Loose[] = endpoints?.subsets ?? []
  const ready = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0)
  const notReady = subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0)
  if (ready > 0) out.push(pass('endpoints', `${ready} ready endpoint${ready > 1 ? 's' : ''}${notReady ? `, ${notReady} not ready` : ''}`))
  else if (notReady > 0) out.push(problem('endpoints', 'error', `no ready endpoints: ${notReady} selected pod${notReady > 1 ? 's are' : ' is'} not ready, so the service answers nothing`, 'see why the workload\'s pods are not ready (its ready and events checks)'))
  else out.push(problem('endpoints', 'error', 'the service has no endpoints: no pod it selects is running', pods.length ? 'wait for the pods to start, or see the workload\'s checks' : 'make the selector match the workload\'s pods'))
  if (pods.length > 0) {
    const declared = containerPorts(pods)
    const bad = ((live.spec?.ports ?? []) as Loose[]).map((p) => p.targetPort ?? p.port).filter((t) => (typeof t === 'number' ? !declared.some((d) => d.port === t) : !declared.some((d) => d.name === t)))
    if (bad.length === 0) out.push(pass('container-ports', 'every target port is a port the selected pods declare'))
    else {
      const have = [...new Set(declared.map((d) => (d.name ? `${d.port} (${d.name})` : String(d.port))))]
      out.push(problem('container-ports', 'error', `target port ${bad.join(', ')} is not a port the selected pods declare (${have.length ? have.join(', ') : 'they declare none'})`, 'target the port the container listens on', 'target-port'))
    }
  }
  return out
}

/**
 * The digest the pods report for the node's container, when they run exactly the image the node names now
 * (`object` is rendered from the current graph: an image changed since the run has no digest yet).
 */
function digestFor(object: KubeObject, pods: Loose[]): string | null {
  const spec = object.spec as Loose | undefined
  const own = ((spec?.template?.spec?.containers ?? spec?.jobTemplate?.spec?.template?.spec?.containers ?? spec?.containers ?? []) as Loose[])
    .find((c) => c.name === object.metadata.name)
  if (!own) return null
  const container = own.name as string
  const image = own.image as string
  for (const p of pods) {
    for (const cs of (p.status?.containerStatuses ?? []) as Loose[]) {
      if (cs.name !== container || cs.image !== image) continue
      const m = /@(sha256:[a-f0-9]{64})$/.exec(String(cs.imageID ?? ''))
      if (m) return m[1]
    }
  }
  return null
}

async function objectChecks(reader: Reader, t: LiveTarget, object: KubeObject, now: number, facts: { imageDigest: string | null }): Promise<Check[]> {
  const out: Check[] = []
  if (t.nodeType === 'plugin') {
    if (!(await reader.served(object.apiVersion, object.kind))) {
      return [problem('crd', 'error', `cluster ${t.cluster} does not serve ${object.kind} (${object.apiVersion}): its CustomResourceDefinition is not installed`, 'install the operator that provides this resource (the plugin\'s documentation names it), then run the workflow again')]
    }
    out.push(pass('crd', `${object.kind} (${object.apiVersion}) is served by cluster ${t.cluster}`))
  }
  const live = await reader.read(object)
  if (!live) {
    out.push(problem('exists', 'warning', `${ref(object)} is not in cluster ${t.cluster}`, 'run the workflow to deploy it (it was deleted, or the node was added after the last run)'))
    return out
  }
  const ours = live.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY && live.metadata?.annotations?.[NODE_ID_ANNOTATION] === t.nodeId
  out.push(ours
    ? pass('exists', `${ref(object)} exists in cluster ${t.cluster}`)
    : problem('exists', 'warning', `${ref(object)} exists in cluster ${t.cluster} but was not deployed from this node`, 'rename the node, or remove the other object, before running'))
  const namespace = object.metadata.namespace ?? 'default'
  const selector = podsSelectorOf(live)
  const pods = live.kind === 'Pod' ? [live] : selector ? await reader.pods(namespace, selector) : []
  if (!PRESENT_IS_READY.has(live.kind) && (live.kind !== 'Service' || live.spec?.type === 'LoadBalancer')) out.push(readiness(live, pods))
  if (live.kind === 'Service' && live.spec?.type !== 'ExternalName' && selector) {
    out.push(...serviceChecks(live, pods, await reader.endpoints(namespace, object.metadata.name), selector))
  }
  if (facts.imageDigest === null) facts.imageDigest = digestFor(object, pods)
  const subjects = [object, ...(live.kind === 'Pod' ? [] : pods.slice(0, POD_EVENT_LIMIT).map((p) => ({ kind: 'Pod', metadata: { name: p.metadata.name } })))]
  const events = (await Promise.all(subjects.map((s) => reader.events(namespace, s.metadata.name))))
    .flat().filter((e) => subjects.some((s) => s.kind === e.involvedObject?.kind && s.metadata.name === e.involvedObject?.name))
  out.push(warningEvents(object, events, now))
  return out
}

/** Live checks of one node; never throws for a cluster that fails to answer. */
export async function liveChecks(t: LiveTarget, now = Date.now()): Promise<LiveReport> {
  const facts = { imageDigest: null as string | null }
  try {
    const reader = await Reader.open(t.kc, t.timeoutMs)
    const checks: Check[] = []
    for (const object of t.objects) checks.push(...await objectChecks(reader, t, object, now, facts))
    return { checks, imageDigest: facts.imageDigest }
  } catch (err) {
    return { checks: [unreachable(t.cluster, describeClusterError(err))], imageDigest: null }
  }
}

/** Only what pinning an image needs: the digest the node's running pods report (a read of the object and its pods). */
export async function runningImageDigest(t: LiveTarget): Promise<string | null> {
  try {
    const reader = await Reader.open(t.kc, t.timeoutMs)
    for (const object of t.objects) {
      const live = await reader.read(object)
      if (!live) continue
      const selector = podsSelectorOf(live)
      const pods = live.kind === 'Pod' ? [live] : selector ? await reader.pods(object.metadata.namespace ?? 'default', selector) : []
      const digest = digestFor(object, pods)
      if (digest) return digest
    }
    return null
  } catch {
    // An unreadable cluster tells nothing about the image: the fix then does not apply, and says why.
    return null
  }
}

export function unreachable(cluster: string, why: string): Check {
  return problem('cluster', 'warning', `live checks skipped: cluster ${cluster} could not be read (${why})`, 'check the cluster\'s connection (POST /v1/api/clusters/{name}/test); the static checks above still hold')
}
