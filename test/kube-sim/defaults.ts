import { invalid, type StatusCause } from './status.ts'
import type { ResourceType } from './resources.ts'
import { deepEqual, isObject, labelsMatchSelector, type JsonObject, type KObject } from './util.ts'

// Defaulting and validation the apiserver applies on every write. Only the defaults clients visibly
// rely on (so `get -o yaml` looks familiar and controllers have values to read) and the validation
// errors a deploying service is likely to trip over are modelled.

function imagePullPolicy(image: string): string {
  const last = image.split('/').pop() ?? image
  if (last.includes('@')) return 'IfNotPresent'
  const tag = last.includes(':') ? last.split(':').pop() : undefined
  return !tag || tag === 'latest' ? 'Always' : 'IfNotPresent'
}

function defaultContainer(c: JsonObject): void {
  if (typeof c.image === 'string') c.imagePullPolicy ??= imagePullPolicy(c.image)
  c.terminationMessagePath ??= '/dev/termination-log'
  c.terminationMessagePolicy ??= 'File'
  c.resources ??= {}
  for (const p of (c.ports ?? []) as JsonObject[]) p.protocol ??= 'TCP'
}

export function defaultPodSpec(spec: JsonObject | undefined): void {
  if (!isObject(spec)) return
  spec.restartPolicy ??= 'Always'
  spec.terminationGracePeriodSeconds ??= 30
  spec.dnsPolicy ??= 'ClusterFirst'
  spec.securityContext ??= {}
  spec.schedulerName ??= 'default-scheduler'
  spec.enableServiceLinks ??= true
  if (spec.serviceAccount && !spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])] as JsonObject[]) if (isObject(c)) defaultContainer(c)
}

function defaultTemplate(t: JsonObject | undefined): void {
  if (!isObject(t)) return
  defaultPodSpec(t.spec)
}

function pct(v: unknown, fallback: string): unknown { return v ?? fallback }

export function applyDefaults(rt: ResourceType, o: KObject): void {
  const s = (o.spec ??= {}) as JsonObject
  switch (`${rt.group}/${rt.plural}`) {
    case '/pods':
      defaultPodSpec(s)
      o.status ??= {}
      o.status.phase ??= 'Pending'
      o.status.qosClass ??= qosClass(s)
      break
    case 'apps/deployments':
      s.replicas ??= 1
      s.revisionHistoryLimit ??= 10
      s.progressDeadlineSeconds ??= 600
      s.strategy ??= { type: 'RollingUpdate' }
      if (s.strategy.type === undefined) s.strategy.type = 'RollingUpdate'
      if (s.strategy.type === 'RollingUpdate') {
        s.strategy.rollingUpdate ??= {}
        s.strategy.rollingUpdate.maxSurge = pct(s.strategy.rollingUpdate.maxSurge, '25%')
        s.strategy.rollingUpdate.maxUnavailable = pct(s.strategy.rollingUpdate.maxUnavailable, '25%')
      }
      defaultTemplate(s.template)
      break
    case 'apps/replicasets':
      s.replicas ??= 1
      defaultTemplate(s.template)
      break
    case 'apps/statefulsets':
      s.replicas ??= 1
      s.podManagementPolicy ??= 'OrderedReady'
      s.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }
      s.revisionHistoryLimit ??= 10
      s.persistentVolumeClaimRetentionPolicy ??= { whenDeleted: 'Retain', whenScaled: 'Retain' }
      for (const pvc of (s.volumeClaimTemplates ?? []) as JsonObject[]) { pvc.spec ??= {}; pvc.spec.volumeMode ??= 'Filesystem' }
      defaultTemplate(s.template)
      break
    case 'apps/daemonsets':
      s.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }
      s.revisionHistoryLimit ??= 10
      defaultTemplate(s.template)
      break
    case 'batch/jobs': defaultJob(o); break
    case 'batch/cronjobs':
      s.concurrencyPolicy ??= 'Allow'
      s.suspend ??= false
      s.successfulJobsHistoryLimit ??= 3
      s.failedJobsHistoryLimit ??= 1
      if (s.jobTemplate?.spec) { defaultTemplate(s.jobTemplate.spec.template) }
      break
    case '/services': {
      s.type ??= 'ClusterIP'
      s.sessionAffinity ??= 'None'
      for (const p of (s.ports ?? []) as JsonObject[]) { p.protocol ??= 'TCP'; p.targetPort ??= p.port }
      if (s.type !== 'ExternalName') {
        s.ipFamilies ??= ['IPv4']
        s.ipFamilyPolicy ??= 'SingleStack'
        s.internalTrafficPolicy ??= 'Cluster'
      }
      if (s.type === 'NodePort' || s.type === 'LoadBalancer') s.externalTrafficPolicy ??= 'Cluster'
      if (s.type === 'LoadBalancer') s.allocateLoadBalancerNodePorts ??= true
      o.status ??= { loadBalancer: {} }
      break
    }
    case '/persistentvolumeclaims':
      s.volumeMode ??= 'Filesystem'
      if (s.storageClassName === undefined && !s.volumeName) s.storageClassName = 'standard'
      o.status ??= { phase: 'Pending' }
      break
    case '/persistentvolumes':
      s.persistentVolumeReclaimPolicy ??= 'Retain'
      s.volumeMode ??= 'Filesystem'
      o.status ??= { phase: 'Available' }
      break
    case '/namespaces':
      s.finalizers ??= ['kubernetes']
      o.status ??= { phase: 'Active' }
      o.metadata.labels = { ...(o.metadata.labels ?? {}), 'kubernetes.io/metadata.name': o.metadata.name! }
      break
    case '/secrets':
      o.type ??= 'Opaque'
      if (isObject(o.stringData)) {
        o.data = { ...(o.data ?? {}) }
        for (const [k, v] of Object.entries(o.stringData)) o.data[k] = Buffer.from(String(v)).toString('base64')
        delete o.stringData
      }
      break
    case 'autoscaling/horizontalpodautoscalers':
      s.minReplicas ??= 1
      break
    case 'apiextensions.k8s.io/customresourcedefinitions':
      s.conversion ??= { strategy: 'None' }
      break
    default: break
  }
  // Types without a spec in the real API must not grow one.
  if (!specKinds.has(`${rt.group}/${rt.plural}`) && isObject(o.spec) && Object.keys(o.spec).length === 0) delete o.spec
}

const specKinds = new Set(['/pods', '/services', '/persistentvolumeclaims', '/persistentvolumes', '/namespaces', '/nodes'])

function defaultJob(o: KObject): void {
  const s = o.spec as JsonObject
  // Both unset means one pod to completion; a parallelism alone means a work queue (no completions).
  if (s.completions === undefined && s.parallelism === undefined) s.completions = 1
  s.parallelism ??= 1
  s.backoffLimit ??= 6
  s.completionMode ??= 'NonIndexed'
  s.suspend ??= false
  s.podReplacementPolicy ??= 'TerminatingOrFailed'
  s.template ??= {}
  s.template.metadata ??= {}
  const uid = o.metadata.uid
  if (uid && !s.manualSelector) {
    const labels = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': o.metadata.name!, 'controller-uid': uid, 'job-name': o.metadata.name! }
    s.selector ??= { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } }
    s.template.metadata.labels = { ...labels, ...(s.template.metadata.labels ?? {}) }
  }
  defaultTemplate(s.template)
}

function qosClass(spec: JsonObject): string {
  const cs = (spec.containers ?? []) as JsonObject[]
  const anyRes = cs.some((c) => Object.keys(c.resources?.requests ?? {}).length || Object.keys(c.resources?.limits ?? {}).length)
  if (!anyRes) return 'BestEffort'
  const guaranteed = cs.every((c) => ['cpu', 'memory'].every((r) => c.resources?.limits?.[r] && (c.resources?.requests?.[r] ?? c.resources.limits[r]) === c.resources.limits[r]))
  return guaranteed ? 'Guaranteed' : 'Burstable'
}

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/

/** Validation that yields the same 422 Invalid a real apiserver would for the common mistakes. */
export function validate(rt: ResourceType, o: KObject, old?: KObject): void {
  const causes: StatusCause[] = []
  const name = o.metadata.name ?? ''
  const key = `${rt.group}/${rt.plural}`
  const nameRule = key === '/services' ? dns1035Label : key === '/namespaces' ? dns1123Label : dns1123Subdomain
  if (!rt.crd && (!nameRule.test(name) || name.length > (nameRule === dns1123Subdomain ? 253 : 63))) {
    causes.push({ field: 'metadata.name', message: `Invalid value: "${name}": a lowercase RFC 1123 ${nameRule === dns1123Subdomain ? 'subdomain' : 'label'} must consist of lower case alphanumeric characters or '-'` })
  }
  const spec = (o.spec ?? {}) as JsonObject
  const checkPodSpec = (ps: JsonObject | undefined, at: string) => {
    const cs = (ps?.containers ?? []) as JsonObject[]
    if (!cs.length) causes.push({ field: `${at}.containers`, message: 'Required value', reason: 'FieldValueRequired' })
    cs.forEach((c, i) => {
      if (!c.name) causes.push({ field: `${at}.containers[${i}].name`, message: 'Required value', reason: 'FieldValueRequired' })
      if (!c.image) causes.push({ field: `${at}.containers[${i}].image`, message: 'Required value', reason: 'FieldValueRequired' })
    })
  }
  const checkSelector = (at = 'spec') => {
    if (!spec.selector) { causes.push({ field: `${at}.selector`, message: 'Required value', reason: 'FieldValueRequired' }); return }
    if (!labelsMatchSelector(spec.template?.metadata?.labels, spec.selector)) {
      causes.push({ field: `${at}.template.metadata.labels`, message: `Invalid value: ${JSON.stringify(spec.template?.metadata?.labels ?? {})}: \`selector\` does not match template \`labels\`` })
    }
    if (old && !deepEqual(old.spec?.selector, spec.selector)) causes.push({ field: `${at}.selector`, message: `Invalid value: ${JSON.stringify(spec.selector)}: field is immutable` })
  }
  switch (key) {
    case '/pods': checkPodSpec(spec, 'spec'); break
    case 'apps/deployments': case 'apps/replicasets': case 'apps/statefulsets': case 'apps/daemonsets':
      checkSelector()
      checkPodSpec(spec.template?.spec, 'spec.template.spec')
      if (typeof spec.replicas === 'number' && spec.replicas < 0) causes.push({ field: 'spec.replicas', message: `Invalid value: ${spec.replicas}: must be greater than or equal to 0` })
      break
    case 'batch/jobs': {
      checkPodSpec(spec.template?.spec, 'spec.template.spec')
      const rp = spec.template?.spec?.restartPolicy
      if (rp !== 'Never' && rp !== 'OnFailure') causes.push({ field: 'spec.template.spec.restartPolicy', message: `Unsupported value: "${rp}": supported values: "OnFailure", "Never"`, reason: 'FieldValueNotSupported' })
      break
    }
    case 'batch/cronjobs':
      if (!spec.schedule) causes.push({ field: 'spec.schedule', message: 'Required value', reason: 'FieldValueRequired' })
      break
    case '/services':
      if (spec.type !== 'ExternalName' && spec.clusterIP !== 'None' && !(spec.ports ?? []).length) causes.push({ field: 'spec.ports', message: 'Required value', reason: 'FieldValueRequired' })
      if (old && old.spec?.clusterIP && spec.clusterIP && old.spec.clusterIP !== spec.clusterIP) causes.push({ field: 'spec.clusterIPs[0]', message: `Invalid value: []string{"${spec.clusterIP}"}: may not change once set` })
      break
    case '/persistentvolumeclaims':
      if (!spec.resources?.requests?.storage && !spec.volumeName) causes.push({ field: 'spec.resources[storage]', message: 'Required value', reason: 'FieldValueRequired' })
      if (!(spec.accessModes ?? []).length) causes.push({ field: 'spec.accessModes', message: 'Required value', reason: 'FieldValueRequired' })
      break
    case 'apiextensions.k8s.io/customresourcedefinitions': {
      const n = spec.names ?? {}
      if (!spec.group || !n.plural || !n.kind) causes.push({ field: 'spec', message: 'Required value: group, names.plural and names.kind', reason: 'FieldValueRequired' })
      else if (name !== `${n.plural}.${spec.group}`) causes.push({ field: 'metadata.name', message: `Invalid value: "${name}": must be spec.names.plural+"."+spec.group` })
      if (!(spec.versions ?? []).length) causes.push({ field: 'spec.versions', message: 'Required value', reason: 'FieldValueRequired' })
      else if ((spec.versions as JsonObject[]).filter((v) => v.storage).length !== 1) causes.push({ field: 'spec.versions', message: 'Invalid value: must have exactly one version marked as storage version' })
      break
    }
    case 'policy/poddisruptionbudgets':
      if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) causes.push({ field: 'spec', message: 'Invalid value: minAvailable and maxUnavailable cannot be both set' })
      break
    case 'rbac.authorization.k8s.io/rolebindings': case 'rbac.authorization.k8s.io/clusterrolebindings': {
      const ref = (o as JsonObject).roleRef as JsonObject | undefined
      if (!ref?.kind || !ref.name) causes.push({ field: 'roleRef', message: 'Required value', reason: 'FieldValueRequired' })
      else if (key === 'rbac.authorization.k8s.io/clusterrolebindings' && ref.kind !== 'ClusterRole') causes.push({ field: 'roleRef.kind', message: `Unsupported value: "${ref.kind}": supported values: "ClusterRole"`, reason: 'FieldValueNotSupported' })
      else if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole') causes.push({ field: 'roleRef.kind', message: `Unsupported value: "${ref.kind}": supported values: "Role", "ClusterRole"`, reason: 'FieldValueNotSupported' })
      // A binding names what it grants once: to grant something else, delete it and create another.
      if (old && !deepEqual((old as JsonObject).roleRef, ref)) causes.push({ field: 'roleRef', message: `Invalid value: ${JSON.stringify(ref)}: cannot change roleRef` })
      break
    }
    default: break
  }
  if (causes.length) throw invalid(rt.kind, rt.group, name, causes)
}
