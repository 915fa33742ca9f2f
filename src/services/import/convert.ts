// Loaded compose services → canvas nodes and edges. Deterministic: names are allocated in sorted order,
// services are emitted in dependency order (dependencies first, ties by name), and no value depends on
// anything but the input. Secret values are never written: sensitive names (and values built from
// sensitive variables) become Secret keys whose values the run supplies.
import { posix } from 'node:path'
import type { AnalysisIssue, AnalysisService, ImportOptions } from '../../../schemas/import-analysis.ts'
import { MAX_COMPOSE_BYTES } from '../../../schemas/import-analysis.ts'
import { parseDotEnv } from './dotenv.ts'
import { ImportError } from './errors.ts'
import type { ExpansionBudget, Lookup } from './interpolate.ts'
import type { ImportEdge, ImportNode } from './graph.ts'
import type { Loaded, Raw } from './load.ts'
import { NameSpace, dnsLabel, hasUrlPassword, isSensitiveName } from './names.ts'
import { parsePort, type PortPair } from './ports.ts'
import { cpuQuantity, durationSeconds, memoryQuantity, shellSplit } from './units.ts'
import { CONVERTED, SILENT, unconvertedMessage } from './warnings.ts'

export interface ConvertInput {
  loaded: Loaded
  lookup: Lookup
  /** The analysis's interpolation budget (env_file values are interpolated here). */
  budget: ExpansionBudget
  options: ImportOptions
  baseDir: string
  files?: ReadonlyMap<string, string>
  repo?: { repo_url: string; branch?: string }
}

export interface Converted {
  services: AnalysisService[]
  nodes: ImportNode[]
  edges: ImportEdge[]
  warnings: AnalysisIssue[]
  errors: AnalysisIssue[]
}

const DATA_KEY = /^[-._a-zA-Z0-9]+$/
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/
const DEFAULT_CLAIM_SIZE = '1Gi'
/** Usual ports of common images, for services that other services reach without declaring a port. */
const WELL_KNOWN_PORTS: Array<[RegExp, number]> = [
  [/(^|\/)(mysql|mariadb|percona)(:|$)/, 3306], [/(^|\/)(postgres|postgis|pgvector|timescaledb)(:|$)/, 5432],
  [/(^|\/)(redis|valkey|keydb)(:|$)/, 6379], [/(^|\/)(mongo|mongodb)(:|$)/, 27017], [/(^|\/)memcached(:|$)/, 11211],
  [/(^|\/)rabbitmq(:|$)/, 5672], [/(^|\/)(elasticsearch|opensearch)(:|$)/, 9200], [/(^|\/)nats(:|$)/, 4222],
  [/(^|\/)zookeeper(:|$)/, 2181], [/(^|\/)(kafka|cp-kafka)(:|$)/, 9092], [/(^|\/)minio(:|$)/, 9000],
]
const PULL_POLICY: Record<string, 'Always' | 'IfNotPresent' | 'Never'> = { always: 'Always', never: 'Never', missing: 'IfNotPresent', if_not_present: 'IfNotPresent' }

interface VolumeUse { volume: string; target: string; readOnly: boolean }
interface FileUse { source: string; target: string }

function isBind(source: string): boolean {
  return source.startsWith('.') || source.startsWith('/') || source.startsWith('~') || /^[a-zA-Z]:[\\/]/.test(source)
}

/** A service's volume entries: named volumes kept; binds, tmpfs and anonymous volumes reported. */
function volumeUses(service: string, svc: Raw, warn: (key: string, message: string) => void): VolumeUse[] {
  const out: VolumeUse[] = []
  for (const entry of (svc.volumes ?? []) as unknown[]) {
    let type: string, source: string, target: string, readOnly: boolean
    if (entry && typeof entry === 'object') {
      const o = entry as Raw
      type = String(o.type ?? 'volume'); source = String(o.source ?? ''); target = String(o.target ?? ''); readOnly = o.read_only === true
    } else {
      const parts = String(entry).split(':')
      if (parts.length === 1) { type = 'volume'; source = ''; target = parts[0]; readOnly = false } else {
        source = parts[0]; target = parts[1]; readOnly = (parts[2] ?? '').split(',').includes('ro')
        type = isBind(source) ? 'bind' : 'volume'
      }
    }
    if (type === 'bind') warn('volumes', `bind mount of a host path at ${target}: host paths are not converted (bake the files into the image, or use a ConfigMap or a volume)`)
    else if (type === 'tmpfs') warn('volumes', `tmpfs at ${target} is not converted`)
    else if (type !== 'volume') warn('volumes', `a ${type} mount at ${target} is not converted`)
    else if (source === '') warn('volumes', `anonymous volume at ${target}: its data is not kept (name the volume to get a claim)`)
    else out.push({ volume: source, target, readOnly })
  }
  return out
}

function fileUses(entries: unknown, defaultTarget: (source: string) => string): FileUse[] {
  return ((entries ?? []) as unknown[]).map((e) => {
    if (e && typeof e === 'object') {
      const o = e as Raw
      const source = String(o.source)
      const t = o.target !== undefined ? String(o.target) : undefined
      return { source, target: t === undefined ? defaultTarget(source) : t }
    }
    return { source: String(e), target: defaultTarget(String(e)) }
  })
}

function topoOrder(names: string[], deps: Map<string, string[]>): string[] {
  const order: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (n: string, path: string[]) => {
    const s = state.get(n)
    if (s === 'done') return
    if (s === 'visiting') throw new ImportError(`depends_on forms a cycle: ${[...path.slice(path.indexOf(n)), n].join(' → ')}`)
    state.set(n, 'visiting')
    for (const d of [...(deps.get(n) ?? [])].sort()) visit(d, [...path, n])
    state.set(n, 'done')
    order.push(n)
  }
  for (const n of [...names].sort()) visit(n, [])
  return order
}

export function convert(input: ConvertInput): Converted {
  const { loaded, lookup, options } = input
  const warnings: AnalysisIssue[] = []
  const errors: AnalysisIssue[] = []
  const warnFor = (service: string | undefined) => (key: string, message: string) => warnings.push({ ...(service !== undefined && { service }), key, message })
  const errorFor = (service: string | undefined, key: string, message: string) => errors.push({ ...(service !== undefined && { service }), key, message })

  // Profiles: a service without profiles is always active; one with profiles only when one is chosen.
  const chosen = new Set(options.profiles ?? [])
  const active = [...loaded.services.keys()].filter((n) => {
    const p = (loaded.services.get(n)!.profiles ?? []) as string[]
    return p.length === 0 || p.some((x) => chosen.has(x))
  })
  const activeSet = new Set(active)

  // depends_on, restricted to what exists and is active.
  const deps = new Map<string, Array<{ service: string; condition: AnalysisService['depends_on'][number]['condition'] }>>()
  for (const name of active) {
    const list: Array<{ service: string; condition: AnalysisService['depends_on'][number]['condition'] }> = []
    for (const [dep, spec] of Object.entries((loaded.services.get(name)!.depends_on ?? {}) as Raw).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const required = (spec as Raw)?.required !== false
      if (!loaded.services.has(dep)) { errorFor(name, 'depends_on', `depends on ${JSON.stringify(dep)}, which is not defined`); continue }
      if (!activeSet.has(dep)) {
        if (required) errorFor(name, 'depends_on', `depends on ${dep}, whose profiles are not active; enable one of them`)
        continue
      }
      list.push({ service: dep, condition: ((spec as Raw)?.condition ?? 'service_started') as 'service_started' })
    }
    deps.set(name, list)
  }
  const order = topoOrder(active, new Map([...deps].map(([k, v]) => [k, v.map((d) => d.service)])))

  // Names, allocated in sorted order per Kubernetes kind, so YAML order never matters.
  const workloadNames = new NameSpace()
  const configMapNames = new NameSpace()
  const secretNames = new NameSpace()
  const claimNames = new NameSpace()
  const ingressNames = new NameSpace()
  const sorted = [...active].sort()
  const resourceName = new Map(sorted.map((n) => [n, workloadNames.claim(dnsLabel(n), n)]))

  const volumesUsed = new Map<string, Array<{ service: string; use: VolumeUse }>>()
  const perService = new Map<string, { volumes: VolumeUse[]; secrets: FileUse[]; configs: FileUse[] }>()
  for (const name of sorted) {
    const svc = loaded.services.get(name)!
    const uses = volumeUses(name, svc, warnFor(name)).filter((u) => {
      if (!Object.hasOwn(loaded.volumes, u.volume)) { errorFor(name, 'volumes', `mounts the volume ${JSON.stringify(u.volume)}, which the top-level volumes do not define`); return false }
      return true
    })
    for (const u of uses) volumesUsed.set(u.volume, [...(volumesUsed.get(u.volume) ?? []), { service: name, use: u }])
    const secrets = fileUses(svc.secrets, (s) => s).map((u) => ({ source: u.source, target: u.target.startsWith('/') ? u.target : `/run/secrets/${u.target}` }))
      .filter((u) => Object.hasOwn(loaded.secrets, u.source) || (errorFor(name, 'secrets', `uses the secret ${JSON.stringify(u.source)}, which the top-level secrets do not define`), false))
    const configs = fileUses(svc.configs, (s) => `/${s}`).map((u) => ({ source: u.source, target: u.target.startsWith('/') ? u.target : `/${u.target}` }))
      .filter((u) => Object.hasOwn(loaded.configs, u.source) || (errorFor(name, 'configs', `uses the config ${JSON.stringify(u.source)}, which the top-level configs do not define`), false))
    perService.set(name, { volumes: uses, secrets, configs })
  }

  const nodes: ImportNode[] = []
  const edges: ImportEdge[] = []
  const node = (type: string, name: string, data: Record<string, unknown>): ImportNode => {
    const n: ImportNode = { id: `${type}-${name}`, type, position: { x: 0, y: 0 }, data: { name, ...data } }
    nodes.push(n)
    return n
  }
  const edge = (source: ImportNode, target: ImportNode, extra: Partial<ImportEdge> = {}) => {
    edges.push({ id: `${source.id}--${target.id}`, source: source.id, target: target.id, ...extra, data: extra.data ?? { relation: 'wiring' } })
  }

  // Shared nodes first: claims, top-level secrets and configs (in sorted order of their compose names).
  const claimNode = new Map<string, ImportNode>()
  for (const volume of [...volumesUsed.keys()].sort()) {
    const users = volumesUsed.get(volume)!
    const def = (loaded.volumes[volume] ?? {}) as Raw
    const warnVolume = warnFor(users[0].service)
    if (def.external) warnVolume('volumes', `volume ${volume} is external: a new claim is generated; bind it to the existing data yourself`)
    if (def.driver !== undefined || def.driver_opts !== undefined) warnVolume('volumes', `volume ${volume}: driver and driver_opts are not converted (the cluster's default storage class is used)`)
    const shared = new Set(users.map((u) => u.service)).size > 1
    if (shared) warnVolume('volumes', `volume ${volume} is shared by ${[...new Set(users.map((u) => u.service))].join(', ')}: the claim asks for ReadWriteMany, which needs a storage class that offers it`)
    const name = claimNames.claim(dnsLabel(volume, 63), volume)
    claimNode.set(volume, node('persistentvolumeclaim', name, {
      storage: DEFAULT_CLAIM_SIZE, accessModes: [shared ? 'ReadWriteMany' : 'ReadWriteOnce'], mountPath: users[0].use.target,
    }))
  }
  const fileKey = (name: string) => (DATA_KEY.test(name) && name.length <= 253 ? name : dnsLabel(name, 253))
  const secretNode = new Map<string, ImportNode>()
  const usedSecrets = new Set([...perService.values()].flatMap((s) => s.secrets.map((u) => u.source)))
  for (const secret of [...usedSecrets].sort()) {
    const def = (loaded.secrets[secret] ?? {}) as Raw
    if (def.external) warnings.push({ key: 'secrets', message: `secret ${secret} is external: a Secret node is generated; supply its value when running` })
    secretNode.set(secret, node('secret', secretNames.claim(dnsLabel(secret, 63), `secret:${secret}`), { keys: [fileKey(secret)] }))
  }
  const configNode = new Map<string, ImportNode>()
  const usedConfigs = new Set([...perService.values()].flatMap((s) => s.configs.map((u) => u.source)))
  for (const config of [...usedConfigs].sort()) {
    const def = (loaded.configs[config] ?? {}) as Raw
    let content: string | undefined
    if (typeof def.content === 'string') content = def.content
    else if (typeof def.environment === 'string') {
      const v = lookup(def.environment)
      if (v !== undefined && !isSensitiveName(def.environment)) content = v
    } else if (typeof def.file === 'string') {
      content = input.files?.get(posix.normalize(posix.join(input.baseDir || '.', def.file)))
      if (content !== undefined && Buffer.byteLength(content) > MAX_COMPOSE_BYTES) content = undefined
    }
    if (content === undefined) warnings.push({ key: 'configs', message: `config ${config}: its content is not available here; the ConfigMap has an empty ${fileKey(config)} to fill in` })
    configNode.set(config, node('configmap', configMapNames.claim(dnsLabel(config, 63), `config:${config}`), { data: { [fileKey(config)]: content ?? '' } }))
  }

  // Names for each service's env ConfigMap / Secret, allocated after the shared ones, in sorted order.
  const envNames = new Map(sorted.map((n) => [n, { configmap: configMapNames.claim(`${resourceName.get(n)!}-env`, `env:${n}`), secret: secretNames.claim(`${resourceName.get(n)!}-env`, `env:${n}`) }]))
  const ingressName = new Map(sorted.map((n) => [n, ingressNames.claim(resourceName.get(n)!, n)]))

  const services: AnalysisService[] = []
  const workloadNode = new Map<string, ImportNode>()
  for (const name of order) {
    const svc = loaded.services.get(name)!
    const warn = warnFor(name)
    const rname = resourceName.get(name)!
    const mine = perService.get(name)!
    const before = nodes.length

    // Image or build.
    const build = svc.build === undefined ? undefined : typeof svc.build === 'string' ? { context: svc.build } as Raw : svc.build as Raw
    const image = typeof svc.image === 'string' && svc.image !== '' ? svc.image : undefined
    if (!image && !build) { errorFor(name, 'image', 'has neither image nor build; not converted'); continue }
    let buildSource: AnalysisService['build'] | undefined
    if (build) {
      const context = posix.normalize(posix.join(input.baseDir || '.', String(build.context ?? '.')))
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(String(build.context ?? ''))) warn('build', 'a remote build context (URL) is kept as written; the builds feature expects a path in the repository')
      buildSource = {
        context: /^[a-z][a-z0-9+.-]*:\/\//i.test(String(build.context ?? '')) ? String(build.context) : context,
        ...(typeof build.dockerfile === 'string' && { dockerfile: build.dockerfile }),
        ...(typeof build.target === 'string' && { target: build.target }),
        ...(input.repo && { repo_url: input.repo.repo_url, ...(input.repo.branch !== undefined && { branch: input.repo.branch }) }),
      }
      if (build.args && Object.keys(build.args as Raw).length > 0) warn('build.args', 'build arguments are not kept; give them to the build when you start it')
      if (build.dockerfile_inline !== undefined) warn('build.dockerfile_inline', 'an inline Dockerfile is not kept; commit it as a file to build it')
    }
    const needsBuild = image === undefined
    const data: Record<string, unknown> = { image: image ?? `${rname}:latest` }
    if (build) {
      data.needsBuild = needsBuild
      data.build = {
        context: buildSource!.context, ...(buildSource!.dockerfile !== undefined && { dockerfile: buildSource!.dockerfile }),
        ...(buildSource!.target !== undefined && { target: buildSource!.target }),
        ...(buildSource!.repo_url !== undefined && { repoUrl: buildSource!.repo_url }), ...(buildSource!.branch !== undefined && { branch: buildSource!.branch }),
      }
    }
    if (typeof svc.pull_policy === 'string') {
      const p = PULL_POLICY[svc.pull_policy]
      if (p) data.imagePullPolicy = p
      else if (svc.pull_policy !== 'build') warn('pull_policy', `pull_policy ${svc.pull_policy} is not converted`)
    }

    // Kind and replicas.
    const deploy = (svc.deploy ?? {}) as Raw
    const global = deploy.mode === 'global'
    const kind: AnalysisService['kind'] = global ? 'daemonset' : mine.volumes.length > 0 ? 'statefulset' : 'deployment'
    let replicas = 1
    if (typeof deploy.replicas === 'number') replicas = deploy.replicas
    else if (typeof svc.scale === 'number') replicas = svc.scale
    if (replicas > 1000) { warn('deploy.replicas', `${replicas} replicas are capped at 1000`); replicas = 1000 }
    if (!global && (deploy.replicas !== undefined || svc.scale !== undefined)) data.replicas = replicas
    if (global && deploy.replicas !== undefined) warn('deploy.replicas', 'replicas has no effect with mode: global (one pod per node)')
    for (const k of Object.keys(deploy).sort()) if (!['replicas', 'resources', 'mode'].includes(k) && !k.startsWith('x-')) warn(`deploy.${k}`, `deploy.${k} is not converted`)

    // Resources: deploy.resources, else the legacy service-level keys.
    const res = (deploy.resources ?? {}) as Raw
    const limits = { ...(svc.cpus !== undefined && { cpus: svc.cpus }), ...(svc.mem_limit !== undefined && { memory: svc.mem_limit }), ...(res.limits ?? {}) } as Raw
    const requests = { ...(svc.mem_reservation !== undefined && { memory: svc.mem_reservation }), ...(res.reservations ?? {}) } as Raw
    const quantities = (from: Raw, key: string) => {
      const out: Record<string, string> = {}
      if (from.cpus !== undefined) { const q = cpuQuantity(from.cpus); if (q) out.cpu = q; else warn(key, `cpus ${JSON.stringify(from.cpus)} is not a CPU count`) }
      if (from.memory !== undefined) { const q = memoryQuantity(from.memory); if (q) out.memory = q; else warn(key, `memory ${JSON.stringify(from.memory)} is not a size`) }
      for (const k of Object.keys(from)) if (!['cpus', 'memory'].includes(k)) warn(key, `${k} is not converted`)
      return out
    }
    const lim = quantities(limits, 'deploy.resources.limits')
    const req = quantities(requests, 'deploy.resources.reservations')
    if (Object.keys(lim).length + Object.keys(req).length > 0) data.resources = { ...(Object.keys(req).length > 0 && { requests: req }), ...(Object.keys(lim).length > 0 && { limits: lim }) }

    // Command and entrypoint: Compose entrypoint → Kubernetes command, Compose command → args.
    const argv = (v: unknown, key: string): string[] | undefined => {
      if (v === undefined || v === null) return undefined
      if (Array.isArray(v)) return v.map(String)
      const split = shellSplit(String(v))
      if (!split) { warn(key, `${key} has an unterminated quote; not converted`); return undefined }
      return split
    }
    const entrypoint = argv(svc.entrypoint, 'entrypoint')
    const command = argv(svc.command, 'command')
    if (entrypoint !== undefined) {
      if (entrypoint.length === 0) warn('entrypoint', 'an empty entrypoint (clearing the image\'s) cannot be expressed; the image\'s entrypoint stays')
      else data.command = entrypoint
    }
    if (command !== undefined && command.length > 0) data.args = command

    // Ports and expose → one Service; the container port is the first target.
    const pairs: PortPair[] = []
    for (const [key, list, internal] of [['ports', svc.ports, false], ['expose', svc.expose, true]] as const) {
      for (const entry of (list ?? []) as unknown[]) {
        const r = parsePort(entry, internal)
        if (r.problem) warn(key, `${JSON.stringify(String(typeof entry === 'object' ? JSON.stringify(entry) : entry).slice(0, 60))}: ${r.problem}; not converted`)
        pairs.push(...r.pairs)
      }
    }
    if (pairs.length === 0 && svc.network_mode === undefined && image) {
      const known = WELL_KNOWN_PORTS.find(([re]) => re.test(image.split('@')[0]))
      if (known) {
        pairs.push({ target: known[1], protocol: 'TCP', internal: true })
        warn('expose', `no ports or expose: a cluster-internal Service on ${known[1]}, the usual port of ${image.split(/[:@]/)[0]}, lets other services reach ${name} by name; check the port`)
      } else if (order.some((o) => (deps.get(o) ?? []).some((d) => d.service === name))) {
        warn('expose', `other services depend on ${name} but it declares no ports or expose: no Service is generated, so they cannot reach it by name; add expose`)
      }
    }
    const servicePorts = new Map<string, PortPair>()
    for (const p of pairs) {
      const key = `${p.target}/${p.protocol}`
      const had = servicePorts.get(key)
      if (!had || (had.internal && !p.internal)) servicePorts.set(key, p)
    }
    const portList = [...servicePorts.values()]
    if (portList.length > 0) data.port = portList[0].target

    // Environment: plain values → ConfigMap, sensitive names and values → Secret keys (values dropped).
    const env = new Map<string, string>()
    const tainted = new Set<string>()
    for (const spec of (Array.isArray(svc.env_file) ? svc.env_file : svc.env_file !== undefined ? [svc.env_file] : []) as unknown[]) {
      const path = typeof spec === 'string' ? spec : String((spec as Raw).path)
      const required = typeof spec === 'string' || (spec as Raw).required !== false
      const full = posix.normalize(posix.join(input.baseDir || '.', path))
      const content = input.files?.get(full)
      if (content === undefined) {
        if (required) warn('env_file', `env_file ${path} is not available here; its variables are missing (give its content, or import from the repository)`)
        continue
      }
      if (Buffer.byteLength(content) > MAX_COMPOSE_BYTES) { warn('env_file', `env_file ${path} is larger than ${MAX_COMPOSE_BYTES} bytes; not read`); continue }
      const fromSecrets = new Set<string>()
      for (const [k, v] of parseDotEnv(content, lookup, `env_file ${path}`, (used, value) => { if (used.some(isSensitiveName)) fromSecrets.add(value) }, input.budget)) {
        env.set(k, v)
        if (fromSecrets.has(v)) tainted.add(k)
      }
    }
    for (const [k, v] of Object.entries((svc.environment ?? {}) as Raw)) {
      if (v === null || v === undefined) {
        const from = lookup(k)
        if (from === undefined) continue // unset in Compose: the variable is not set in the container
        env.set(k, from)
        if (isSensitiveName(k)) tainted.add(k)
        continue
      }
      const value = typeof v === 'string' ? v : String(v)
      env.set(k, value)
      if (loaded.taintedValues.has(value) || loaded.taintedValues.has(`${k}=${value}`)) tainted.add(k)
    }
    for (const ref of [...loaded.sensitiveRefs].sort()) {
      const used = JSON.stringify([svc.command, svc.entrypoint, svc.healthcheck]).includes(`$(${ref})`)
      if (used) { if (!env.has(ref)) env.set(ref, ''); tainted.add(ref); warn('command', `uses the sensitive variable ${ref}: written as $(${ref}), its value comes from the ${envNames.get(name)!.secret} Secret at run time`) }
    }
    const plain: Record<string, string> = {}
    const secretKeys: string[] = []
    for (const k of [...env.keys()].sort()) {
      const v = env.get(k)!
      if (!ENV_NAME.test(k) || !DATA_KEY.test(k)) { warn('environment', `${JSON.stringify(k.slice(0, 80))} is not a valid Kubernetes variable name; not converted`); continue }
      if (isSensitiveName(k) || tainted.has(k) || hasUrlPassword(v)) secretKeys.push(k)
      else plain[k] = v
    }

    // Probes from the healthcheck.
    const hc = svc.healthcheck as Raw | undefined
    if (hc && hc.disable !== true) {
      const test = hc.test
      let exec: string[] | undefined
      if (typeof test === 'string') exec = ['/bin/sh', '-c', test]
      else if (Array.isArray(test) && test[0] === 'CMD') exec = test.slice(1).map(String)
      else if (Array.isArray(test) && test[0] === 'CMD-SHELL') exec = ['/bin/sh', '-c', test.slice(1).join(' ')]
      else if (Array.isArray(test) && test[0] === 'NONE') exec = undefined
      else if (test === undefined) warn('healthcheck', 'no test: the image\'s own HEALTHCHECK is not visible here; no probe is generated')
      else warn('healthcheck', 'test must start with CMD, CMD-SHELL or NONE; no probe is generated')
      if (exec && exec.length > 0) {
        const seconds = (key: string, fallback: number) => {
          const v = hc[key]
          if (v === undefined) return fallback
          const s = durationSeconds(v)
          if (s === undefined) { warn(`healthcheck.${key}`, `${key} is not a duration; ${fallback}s used`); return fallback }
          return s
        }
        const retries = typeof hc.retries === 'number' ? hc.retries : Number(hc.retries ?? 3)
        data.readinessProbe = {
          exec: { command: exec },
          periodSeconds: Math.max(1, Math.ceil(seconds('interval', 30))),
          timeoutSeconds: Math.max(1, Math.ceil(seconds('timeout', 30))),
          failureThreshold: Math.min(1000, Math.max(1, Number.isFinite(retries) ? Math.round(retries) : 3)),
          ...(hc.start_period !== undefined && { initialDelaySeconds: Math.min(86_400, Math.ceil(seconds('start_period', 0))) }),
        }
      }
    }

    // Mounts: claims, secrets and configs, each at the path Compose uses.
    const mounts: Array<{ name: string; mountPath: string; readOnly?: boolean; subPath?: string }> = []
    for (const u of mine.volumes) mounts.push({ name: claimNode.get(u.volume)!.data.name as string, mountPath: u.target, ...(u.readOnly && { readOnly: true }) })
    for (const u of mine.secrets) mounts.push({ name: secretNode.get(u.source)!.data.name as string, mountPath: u.target, readOnly: true, subPath: fileKey(u.source) })
    for (const u of mine.configs) mounts.push({ name: configNode.get(u.source)!.data.name as string, mountPath: u.target, readOnly: true, subPath: fileKey(u.source) })
    const seenPaths = new Set<string>()
    const uniqueMounts = mounts.filter((m) => (seenPaths.has(m.mountPath) ? (warn('volumes', `two mounts at ${m.mountPath}; the first is kept`), false) : (seenPaths.add(m.mountPath), true)))
    if (uniqueMounts.length > 0) data.volumeMounts = uniqueMounts

    // Everything else: what Kubernetes cannot express, named by key.
    for (const key of Object.keys(svc).sort()) {
      if (CONVERTED.has(key) || SILENT.has(key) || key.startsWith('x-') || key === 'healthcheck') continue
      const v = svc[key]
      if (v === undefined || v === null || v === false || (Array.isArray(v) && v.length === 0)) continue
      warn(key, unconvertedMessage(key))
    }
    if (svc.network_mode !== undefined && svc.network_mode !== 'bridge' && svc.network_mode !== 'default') {
      warn('network_mode', svc.network_mode === 'host' ? 'host networking is not converted; the pod gets its own network' : `network_mode ${String(svc.network_mode).replace(/:.*/, ':…')} is not converted; the pod gets its own network`)
    }
    if (svc.restart === 'no' || (typeof svc.restart === 'string' && svc.restart.startsWith('on-failure'))) warn('restart', `restart: ${svc.restart} is not converted: a ${kind} always restarts its containers`)
    if (svc.container_name !== undefined) warn('container_name', 'container_name is not converted: pods are named by Kubernetes; other services reach this one by its service name')
    if (svc.networks !== undefined && !Array.isArray(svc.networks) && Object.values(svc.networks as Raw).some((n) => n && typeof n === 'object' && ((n as Raw).aliases || (n as Raw).ipv4_address || (n as Raw).ipv6_address))) {
      warn('networks', 'network aliases and fixed addresses are not converted: services reach each other by service name')
    }
    if (svc.links !== undefined) warn('links', 'links are not needed: services reach each other by service name (aliases are not converted)')

    const workload = node(kind, rname, data)
    workloadNode.set(name, workload)
    if (Object.keys(plain).length > 0) {
      const cm = node('configmap', envNames.get(name)!.configmap, { data: plain })
      edge(cm, workload)
    }
    if (secretKeys.length > 0) {
      const sec = node('secret', envNames.get(name)!.secret, { keys: secretKeys })
      edge(sec, workload)
    }
    for (const volume of [...new Set(mine.volumes.map((u) => u.volume))]) edge(claimNode.get(volume)!, workload)
    for (const source of [...new Set(mine.secrets.map((u) => u.source))]) edge(secretNode.get(source)!, workload, { targetHandle: 'volume' })
    for (const source of [...new Set(mine.configs.map((u) => u.source))]) edge(configNode.get(source)!, workload, { targetHandle: 'volume' })
    for (const d of deps.get(name) ?? []) {
      const from = workloadNode.get(d.service)
      if (from) edge(from, workload, { data: { relation: 'depends_on', condition: d.condition } })
    }
    if (portList.length > 0) {
      const service = node('service', rname, {
        serviceType: 'ClusterIP',
        ports: portList.map((p) => ({ name: `${p.protocol.toLowerCase()}-${p.target}`, port: p.target, targetPort: p.target, protocol: p.protocol })),
      })
      edge(workload, service)
      const published = portList.find((p) => !p.internal && p.protocol === 'TCP')
      if (options.ingress && published) {
        const host = typeof options.ingress === 'object' && options.ingress.host ? `${rname}.${options.ingress.host}` : undefined
        const ing = node('ingress', ingressName.get(name)!, { ...(host && { host }), paths: [{ path: '/', pathType: 'Prefix', serviceName: rname, servicePort: published.target }] })
        edge(service, ing)
      }
    }
    services.push({
      name, resource_name: rname, kind, ...(image !== undefined && { image }), needs_build: needsBuild,
      ...(buildSource && { build: buildSource }),
      node_ids: nodes.slice(before).map((n) => n.id).sort((a, b) => (a === workload.id ? -1 : b === workload.id ? 1 : a < b ? -1 : a > b ? 1 : 0)),
      depends_on: deps.get(name) ?? [],
      ports: portList.map((p) => ({ target: p.target, ...(p.published !== undefined && { published: p.published }), protocol: p.protocol, internal: p.internal })),
      profiles: [...((svc.profiles ?? []) as string[])].sort(),
      replicas: global ? 0 : replicas,
    })
  }
  return { services, nodes, edges, warnings, errors }
}
