import { storageKey, type ResourceType } from './resources.ts'
import { age, isObject, selectorString, type Json, type JsonObject, type KObject } from './util.ts'

// Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), which is what
// `kubectl get` renders. Columns mirror the apiserver's printers for the built-in kinds; priority-1
// columns are the ones `-o wide` adds.

export interface Column { name: string; type: string; format: string; description: string; priority: number }
type Cell = string | number | boolean | null
interface Printer { columns: Column[]; row(o: KObject, now: number): Cell[] }

const col = (name: string, opts: Partial<Column> = {}): Column => ({ name, type: 'string', format: '', description: name, priority: 0, ...opts })
const nameCol = col('Name', { format: 'name', description: 'Name must be unique within a namespace.' })
const ageCol = col('Age', { description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' })
const wide = (name: string) => col(name, { priority: 1 })

const ageOf = (o: KObject, now: number) => age(o.metadata.creationTimestamp, now)
const orNone = (v: unknown) => (v === undefined || v === null || v === '' ? '<none>' : String(v))

function podStatus(p: KObject): { reason: string; ready: string; restarts: string } {
  const cs = (p.status?.containerStatuses ?? []) as JsonObject[]
  const total = (p.spec?.containers ?? []).length
  const ready = cs.filter((c) => c.ready).length
  let restarts = 0
  let lastRestart: string | undefined
  let reason: string = p.status?.reason ?? p.status?.phase ?? 'Pending'
  // As kubectl's printer: the first init container not yet done decides the status (Init:1/3, Init:Error).
  let initializing = false
  const inits = (p.status?.initContainerStatuses ?? []) as JsonObject[]
  for (const [i, c] of inits.entries()) {
    restarts += c.restartCount ?? 0
    const term = c.state?.terminated
    if (term && term.exitCode === 0) continue
    if (term) reason = term.reason ? `Init:${term.reason}` : `Init:ExitCode:${term.exitCode}`
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`
    else reason = `Init:${i}/${(p.spec?.initContainers ?? []).length}`
    initializing = true
    break
  }
  for (const c of initializing ? [] : cs) {
    restarts += c.restartCount ?? 0
    const fin = c.lastState?.terminated?.finishedAt
    if (fin && (!lastRestart || fin > lastRestart)) lastRestart = fin
    if (c.state?.waiting?.reason) reason = c.state.waiting.reason
    else if (c.state?.terminated?.reason) reason = c.state.terminated.reason
    else if (c.state?.terminated) reason = `ExitCode:${c.state.terminated.exitCode}`
  }
  if (!initializing && p.status?.phase === 'Running' && cs.every((c) => c.state?.running)) reason = 'Running'
  if (p.metadata.deletionTimestamp) reason = 'Terminating'
  const rs = lastRestart && restarts ? `${restarts} (${age(lastRestart)} ago)` : String(restarts)
  return { reason, ready: `${ready}/${total}`, restarts: rs }
}

function svcPorts(s: KObject): string {
  const ps = (s.spec?.ports ?? []) as JsonObject[]
  if (!ps.length) return '<none>'
  return ps.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',')
}

function externalIp(s: KObject): string {
  const t = s.spec?.type
  const lb = ((s.status?.loadBalancer?.ingress ?? []) as JsonObject[]).map((i) => i.ip ?? i.hostname)
  const ext = (s.spec?.externalIPs ?? []) as string[]
  if (t === 'LoadBalancer') return [...lb, ...ext].join(',') || '<pending>'
  if (t === 'ExternalName') return s.spec?.externalName ?? '<none>'
  return ext.join(',') || '<none>'
}

function images(t: JsonObject | undefined): { containers: string; images: string } {
  const cs = (t?.spec?.containers ?? []) as JsonObject[]
  return { containers: cs.map((c) => c.name).join(','), images: cs.map((c) => c.image).join(',') }
}

function jobStatus(j: KObject): string {
  const conds = (j.status?.conditions ?? []) as JsonObject[]
  const has = (t: string) => conds.some((c) => c.type === t && c.status === 'True')
  if (has('Complete')) return 'Complete'
  if (has('Failed')) return 'Failed'
  if (has('Suspended')) return 'Suspended'
  if (j.metadata.deletionTimestamp) return 'Terminating'
  return 'Running'
}

function duration(from?: string, to?: string): string {
  if (!from) return ''
  return age(from, to ? Date.parse(to) : Date.now())
}

const printers: Record<string, Printer> = {
  '/pods': {
    columns: [nameCol, col('Ready'), col('Status'), col('Restarts'), ageCol, wide('IP'), wide('Node'), wide('Nominated Node'), wide('Readiness Gates')],
    row: (o, now) => { const s = podStatus(o); return [o.metadata.name!, s.ready, s.reason, s.restarts, ageOf(o, now), orNone(o.status?.podIP), orNone(o.spec?.nodeName), '<none>', '<none>'] },
  },
  '/namespaces': { columns: [nameCol, col('Status'), ageCol], row: (o, now) => [o.metadata.name!, o.status?.phase ?? 'Active', ageOf(o, now)] },
  '/nodes': {
    columns: [nameCol, col('Status'), col('Roles'), ageCol, col('Version'), wide('Internal-IP'), wide('External-IP'), wide('OS-Image'), wide('Kernel-Version'), wide('Container-Runtime')],
    row: (o, now) => {
      const ready = ((o.status?.conditions ?? []) as JsonObject[]).find((c) => c.type === 'Ready')
      let st = ready?.status === 'True' ? 'Ready' : 'NotReady'
      if (o.spec?.unschedulable) st += ',SchedulingDisabled'
      const roles = Object.keys(o.metadata.labels ?? {}).filter((k) => k.startsWith('node-role.kubernetes.io/')).map((k) => k.split('/')[1]).join(',') || '<none>'
      const addr = (t: string) => orNone(((o.status?.addresses ?? []) as JsonObject[]).find((a) => a.type === t)?.address)
      const ni = o.status?.nodeInfo ?? {}
      return [o.metadata.name!, st, roles, ageOf(o, now), ni.kubeletVersion ?? '', addr('InternalIP'), addr('ExternalIP'), orNone(ni.osImage), orNone(ni.kernelVersion), orNone(ni.containerRuntimeVersion)]
    },
  },
  '/services': {
    columns: [nameCol, col('Type'), col('Cluster-IP'), col('External-IP'), col('Port(s)'), ageCol, wide('Selector')],
    row: (o, now) => [o.metadata.name!, o.spec?.type ?? 'ClusterIP', orNone(o.spec?.clusterIP), externalIp(o), svcPorts(o), ageOf(o, now), o.spec?.selector ? Object.entries(o.spec.selector).map(([k, v]) => `${k}=${v}`).join(',') : '<none>'],
  },
  '/endpoints': {
    columns: [nameCol, col('Endpoints'), ageCol],
    row: (o, now) => {
      const eps: string[] = []
      for (const s of (o.subsets ?? []) as JsonObject[]) for (const a of (s.addresses ?? []) as JsonObject[]) for (const p of (s.ports ?? [{}]) as JsonObject[]) eps.push(p.port ? `${a.ip}:${p.port}` : a.ip)
      return [o.metadata.name!, eps.length ? (eps.length > 3 ? `${eps.slice(0, 3).join(',')} + ${eps.length - 3} more...` : eps.join(',')) : '<none>', ageOf(o, now)]
    },
  },
  '/configmaps': { columns: [nameCol, col('Data', { type: 'integer' }), ageCol], row: (o, now) => [o.metadata.name!, Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length, ageOf(o, now)] },
  '/secrets': { columns: [nameCol, col('Type'), col('Data', { type: 'integer' }), ageCol], row: (o, now) => [o.metadata.name!, o.type ?? 'Opaque', Object.keys(o.data ?? {}).length, ageOf(o, now)] },
  '/serviceaccounts': { columns: [nameCol, col('Secrets', { type: 'integer' }), ageCol], row: (o, now) => [o.metadata.name!, (o.secrets ?? []).length, ageOf(o, now)] },
  '/persistentvolumeclaims': {
    columns: [nameCol, col('Status'), col('Volume'), col('Capacity'), col('Access Modes'), col('StorageClass'), col('VolumeAttributesClass'), ageCol, wide('VolumeMode')],
    row: (o, now) => [o.metadata.name!, o.metadata.deletionTimestamp ? 'Terminating' : o.status?.phase ?? 'Pending', o.spec?.volumeName ?? '', o.status?.capacity?.storage ?? '', accessModes(o.status?.accessModes), o.spec?.storageClassName ?? '', '<unset>', ageOf(o, now), o.spec?.volumeMode ?? 'Filesystem'],
  },
  '/persistentvolumes': {
    columns: [nameCol, col('Capacity'), col('Access Modes'), col('Reclaim Policy'), col('Status'), col('Claim'), col('StorageClass'), col('VolumeAttributesClass'), col('Reason'), ageCol, wide('VolumeMode')],
    row: (o, now) => [o.metadata.name!, o.spec?.capacity?.storage ?? '', accessModes(o.spec?.accessModes), o.spec?.persistentVolumeReclaimPolicy ?? '', o.status?.phase ?? '', o.spec?.claimRef ? `${o.spec.claimRef.namespace}/${o.spec.claimRef.name}` : '', o.spec?.storageClassName ?? '', '<unset>', o.status?.reason ?? '', ageOf(o, now), o.spec?.volumeMode ?? 'Filesystem'],
  },
  '/events': {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Message'), wide('Source'), wide('First Seen'), wide('Count', ), wide('Name')],
    row: (o, now) => [age(o.lastTimestamp ?? o.eventTime ?? o.metadata.creationTimestamp, now), o.type ?? '', o.reason ?? '', `${(o.involvedObject?.kind ?? '').toLowerCase()}/${o.involvedObject?.name ?? ''}`, o.message ?? '', o.source?.component ?? '', age(o.firstTimestamp ?? o.metadata.creationTimestamp, now), o.count ?? 1, o.metadata.name!],
  },
  'apps/deployments': {
    columns: [nameCol, col('Ready'), col('Up-to-date', { type: 'integer' }), col('Available', { type: 'integer' }), ageCol, wide('Containers'), wide('Images'), wide('Selector')],
    row: (o, now) => { const i = images(o.spec?.template); return [o.metadata.name!, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`, o.status?.updatedReplicas ?? 0, o.status?.availableReplicas ?? 0, ageOf(o, now), i.containers, i.images, selectorString(o.spec?.selector)] },
  },
  'apps/replicasets': {
    columns: [nameCol, col('Desired', { type: 'integer' }), col('Current', { type: 'integer' }), col('Ready', { type: 'integer' }), ageCol, wide('Containers'), wide('Images'), wide('Selector')],
    row: (o, now) => { const i = images(o.spec?.template); return [o.metadata.name!, o.spec?.replicas ?? 0, o.status?.replicas ?? 0, o.status?.readyReplicas ?? 0, ageOf(o, now), i.containers, i.images, selectorString(o.spec?.selector)] },
  },
  'apps/statefulsets': {
    columns: [nameCol, col('Ready'), ageCol, wide('Containers'), wide('Images')],
    row: (o, now) => { const i = images(o.spec?.template); return [o.metadata.name!, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`, ageOf(o, now), i.containers, i.images] },
  },
  'apps/daemonsets': {
    columns: [nameCol, col('Desired', { type: 'integer' }), col('Current', { type: 'integer' }), col('Ready', { type: 'integer' }), col('Up-to-date', { type: 'integer' }), col('Available', { type: 'integer' }), col('Node Selector'), ageCol, wide('Containers'), wide('Images'), wide('Selector')],
    row: (o, now) => { const s = o.status ?? {}; const i = images(o.spec?.template); const ns = o.spec?.template?.spec?.nodeSelector; return [o.metadata.name!, s.desiredNumberScheduled ?? 0, s.currentNumberScheduled ?? 0, s.numberReady ?? 0, s.updatedNumberScheduled ?? 0, s.numberAvailable ?? 0, ns ? Object.entries(ns).map(([k, v]) => `${k}=${v}`).join(',') : '<none>', ageOf(o, now), i.containers, i.images, selectorString(o.spec?.selector)] },
  },
  'batch/jobs': {
    columns: [nameCol, col('Status'), col('Completions'), col('Duration'), ageCol, wide('Containers'), wide('Images'), wide('Selector')],
    row: (o, now) => { const i = images(o.spec?.template); return [o.metadata.name!, jobStatus(o), `${o.status?.succeeded ?? 0}/${o.spec?.completions ?? 1}`, duration(o.status?.startTime, o.status?.completionTime), ageOf(o, now), i.containers, i.images, selectorString(o.spec?.selector)] },
  },
  'batch/cronjobs': {
    columns: [nameCol, col('Schedule'), col('Timezone'), col('Suspend', { type: 'boolean' }), col('Active', { type: 'integer' }), col('Last Schedule'), ageCol, wide('Containers'), wide('Images'), wide('Selector')],
    row: (o, now) => { const i = images(o.spec?.jobTemplate?.spec?.template); return [o.metadata.name!, o.spec?.schedule ?? '', o.spec?.timeZone ?? '<none>', Boolean(o.spec?.suspend), (o.status?.active ?? []).length, o.status?.lastScheduleTime ? age(o.status.lastScheduleTime, now) : '<none>', ageOf(o, now), i.containers, i.images, '<none>'] },
  },
  'networking.k8s.io/ingresses': {
    columns: [nameCol, col('Class'), col('Hosts'), col('Address'), col('Ports'), ageCol],
    row: (o, now) => {
      const hosts = ((o.spec?.rules ?? []) as JsonObject[]).map((r) => r.host ?? '*')
      const addr = ((o.status?.loadBalancer?.ingress ?? []) as JsonObject[]).map((i) => i.ip ?? i.hostname).join(',')
      return [o.metadata.name!, o.spec?.ingressClassName ?? '<none>', hosts.join(',') || '*', addr, (o.spec?.tls ?? []).length ? '80, 443' : '80', ageOf(o, now)]
    },
  },
  'networking.k8s.io/networkpolicies': {
    columns: [nameCol, col('Pod-Selector'), ageCol],
    row: (o, now) => [o.metadata.name!, selectorString(o.spec?.podSelector) || '<none>', ageOf(o, now)],
  },
  'autoscaling/horizontalpodautoscalers': {
    columns: [nameCol, col('Reference'), col('Targets'), col('MinPods', { type: 'integer' }), col('MaxPods', { type: 'integer' }), col('Replicas', { type: 'integer' }), ageCol],
    row: (o, now) => {
      const ref = `${o.spec?.scaleTargetRef?.kind ?? ''}/${o.spec?.scaleTargetRef?.name ?? ''}`
      const cur = ((o.status?.currentMetrics ?? []) as JsonObject[])[0]?.resource?.current?.averageUtilization
      const tgt = ((o.spec?.metrics ?? []) as JsonObject[])[0]?.resource
      const targets = tgt ? `${tgt.name}: ${cur ?? '<unknown>'}${cur !== undefined ? '%' : ''}/${tgt.target?.averageUtilization ?? '?'}%` : '<none>'
      return [o.metadata.name!, ref, targets, o.spec?.minReplicas ?? 1, o.spec?.maxReplicas ?? 0, o.status?.currentReplicas ?? 0, ageOf(o, now)]
    },
  },
  'policy/poddisruptionbudgets': {
    columns: [nameCol, col('Min Available'), col('Max Unavailable'), col('Allowed Disruptions', { type: 'integer' }), ageCol],
    row: (o, now) => [o.metadata.name!, orNone(o.spec?.minAvailable), orNone(o.spec?.maxUnavailable), o.status?.disruptionsAllowed ?? 0, ageOf(o, now)],
  },
  'apiextensions.k8s.io/customresourcedefinitions': {
    columns: [nameCol, col('Created At', { type: 'date' })],
    row: (o) => [o.metadata.name!, o.metadata.creationTimestamp ?? ''],
  },
}

function accessModes(m: string[] | undefined): string {
  const short: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' }
  return (m ?? []).map((x) => short[x] ?? x).join(',')
}

/** A tiny JSONPath evaluator for CRD additionalPrinterColumns: `.a.b`, `.a[0]`, `.a[?(@.type=="Ready")].status`. */
export function jsonPath(o: Json, path: string): Json {
  const tokens = path.replace(/^\{?\.?/, '').replace(/\}$/, '').match(/[^.[\]]+|\[[^\]]*\]/g) ?? []
  let cur: Json[] = [o]
  for (const t of tokens) {
    const next: Json[] = []
    for (const c of cur) {
      if (t.startsWith('[')) {
        const inner = t.slice(1, -1)
        const f = /^\?\(@\.([\w.-]+)\s*==\s*["']([^"']*)["']\)$/.exec(inner)
        if (f && Array.isArray(c)) next.push(...c.filter((x) => String(jsonPath(x, f[1])) === f[2]))
        else if (inner === '*' && Array.isArray(c)) next.push(...c)
        else if (Array.isArray(c)) { const v = c[Number(inner)]; if (v !== undefined) next.push(v) }
      } else if (isObject(c) && c[t] !== undefined) next.push(c[t])
    }
    cur = next
  }
  return cur.length <= 1 ? cur[0] : cur
}

function crdPrinter(rt: ResourceType): Printer {
  const extra = rt.crd?.printerColumns ?? []
  const columns = [nameCol, ...extra.map((c) => col(c.name, { type: c.type === 'date' ? 'string' : c.type ?? 'string', format: c.format ?? '', description: c.description ?? c.name, priority: c.priority ?? 0 }))]
  const hasAge = extra.some((c) => c.jsonPath === '.metadata.creationTimestamp')
  if (!hasAge) columns.push(ageCol)
  return {
    columns,
    row: (o, now) => {
      const cells: Cell[] = [o.metadata.name!]
      for (const c of extra) {
        const v = jsonPath(o, c.jsonPath)
        if (c.type === 'date') cells.push(typeof v === 'string' ? age(v, now) : '<unknown>')
        else cells.push(v === undefined ? null : isObject(v) || Array.isArray(v) ? JSON.stringify(v) : (v as Cell))
      }
      if (!hasAge) cells.push(ageOf(o, now))
      return cells
    },
  }
}

const defaultPrinter: Printer = { columns: [nameCol, ageCol], row: (o, now) => [o.metadata.name!, ageOf(o, now)] }

export function printerFor(rt: ResourceType): Printer {
  if (rt.crd) return crdPrinter(rt)
  return printers[storageKey(rt)] ?? defaultPrinter
}

export type IncludeObject = 'None' | 'Metadata' | 'Object'

export function partialMetadata(o: KObject): KObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata }
}

export function toTable(rt: ResourceType, objs: KObject[], include: IncludeObject, listMeta: JsonObject = {}, withColumns = true): JsonObject {
  const p = printerFor(rt)
  const now = Date.now()
  return {
    kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: listMeta,
    columnDefinitions: withColumns ? p.columns : null,
    rows: objs.map((o) => ({
      cells: p.row(o, now),
      ...(include === 'None' ? {} : { object: include === 'Object' ? o : partialMetadata(o) }),
    })),
  }
}
