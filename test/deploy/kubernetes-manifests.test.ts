// The Kubernetes manifests (deploy/kubernetes, docs/replicas.md): rendered by the real kustomize in kubectl,
// every object checked against the Kubernetes schema (kubernetes-models: types, required fields, formats)
// and for misspelt fields (the type maps of @kubernetes/client-node: kubernetes-models' schemas accept
// unknown names, which an apiserver drops or refuses), the invariants several replicas depend on checked,
// the configuration the pods would get passed through the service's own loadConfig, and the whole applied
// with `kubectl apply --dry-run=server` (client-side and server-side apply) against the simulator, which
// must validate it and store nothing. Skipped, with the reason, when kubectl is not on the PATH.
import { execFile, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { parseAllDocuments, stringify } from 'yaml'
import * as k8s from '@kubernetes/client-node'
import { Namespace } from 'kubernetes-models/v1/Namespace'
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Secret } from 'kubernetes-models/v1/Secret'
import { Service } from 'kubernetes-models/v1/Service'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role'
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding'
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole'
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding'
import { loadConfig, ConfigError } from '../../src/config.ts'
import { startTestCluster } from '../helpers/kube.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>

const ROOT = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url))

function run(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  // Asynchronous: the simulator runs in this process and must keep serving while kubectl waits.
  return new Promise((resolve) => {
    const child = execFile('kubectl', args, { timeout: 30_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr })
    })
    if (input !== undefined) child.stdin!.end(input)
  })
}

async function render(dir: string): Promise<Obj[]> {
  const r = await run(['kustomize', dir])
  if (r.code !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr}`)
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj).filter(Boolean)
}

const models: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace, 'v1/ServiceAccount': ServiceAccount, 'v1/ConfigMap': ConfigMap, 'v1/Secret': Secret,
  'v1/Service': Service, 'apps/v1/Deployment': Deployment, 'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/Role': Role, 'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole, 'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
}

/** Field names the Kubernetes API does not know, by path (client-node's generated models name every field). */
function unknownFields(value: unknown, type: string, path: string): string[] {
  if (value === null || typeof value !== 'object') return []
  const array = /^Array<(.+)>$/.exec(type)
  if (array) return Array.isArray(value) ? value.flatMap((v, i) => unknownFields(v, array[1]!, `${path}[${i}]`)) : []
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type)
  if (map) return Object.entries(value).flatMap(([k, v]) => unknownFields(v, map[1]!, `${path}.${k}`))
  const model = (k8s as unknown as Record<string, { getAttributeTypeMap?: () => Array<{ baseName: string; type: string }> }>)[type]
  if (!model?.getAttributeTypeMap) return []
  const attrs = model.getAttributeTypeMap()
  return Object.entries(value).flatMap(([k, v]) => {
    const attr = attrs.find((a) => a.baseName === k)
    return attr ? unknownFields(v, attr.type, `${path}.${k}`) : [`${path}.${k}`]
  })
}

function checkObjects(t: Test, objects: Obj[]): void {
  for (const o of objects) {
    const what = `${o.kind}/${o.metadata?.name}`
    const Model = models[`${o.apiVersion}/${o.kind}`]
    if (!Model) { t.fail(`${what}: no kubernetes-models class for ${o.apiVersion} ${o.kind}`); continue }
    // kustomize breaks long base64 values over lines; the apiserver's decoder (Go's) skips line breaks, the
    // schema's "byte" format does not.
    const data = o.kind === 'Secret' && o.data ? { ...o, data: Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, String(v).replace(/\s+/g, '')])) } : o
    t.doesNotThrow(() => new Model(data as never).validate(), `${what} is valid against the Kubernetes schema`)
    t.same(unknownFields(o, `V1${o.kind}`, o.kind), [], `${what} has no misspelt or unknown fields`)
  }
}

function matches(selector: Obj | undefined, labels: Record<string, string>): boolean {
  if (!selector || (!selector.matchLabels && !selector.matchExpressions)) return false
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v)
  const byExpression = (selector.matchExpressions ?? []).every((e: Obj) =>
    e.operator === 'In' ? e.values.includes(labels[e.key]) : e.operator === 'NotIn' ? !e.values.includes(labels[e.key])
      : e.operator === 'Exists' ? e.key in labels : !(e.key in labels))
  return byLabel && byExpression
}

const one = (objects: Obj[], kind: string): Obj => {
  const found = objects.filter((o) => o.kind === kind)
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`)
  return found[0]!
}

/** The environment the service's container would see: its env and every envFrom source, from the rendered objects. */
function containerEnv(objects: Obj[], container: Obj): Record<string, string> {
  const env: Record<string, string> = {}
  const source = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)
  const decode = (o: Obj) => o.kind === 'Secret'
    ? { ...Object.fromEntries(Object.entries(o.data ?? {}).map(([k, v]) => [k, Buffer.from(v as string, 'base64').toString('utf8')])), ...o.stringData }
    : o.data ?? {}
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ? source('ConfigMap', from.configMapRef.name) : source('Secret', from.secretRef.name)
    if (ref) Object.assign(env, decode(ref))
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value
    const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef
    if (ref) {
      const o = source(e.valueFrom.secretKeyRef ? 'Secret' : 'ConfigMap', ref.name)
      if (o) env[e.name] = decode(o)[ref.key]
    }
  }
  return env
}

function secrets(): Record<string, string> {
  return {
    JWT_SECRET: randomBytes(48).toString('base64'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    MONGODB_URI: 'mongodb://cluster-workflows:pw@mongodb-0.mongodb-svc:27017,mongodb-1.mongodb-svc:27017/?replicaSet=rs0',
  }
}

async function manifests(): Promise<void> {
  const base = await render(ROOT)

  t.test('every object of the base is a valid Kubernetes object', async (t) => {
    t.same(base.map((o) => o.kind).sort(), ['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Secret', 'Service', 'ServiceAccount'])
    checkObjects(t, base)
    t.same(await render(join(ROOT, 'base')), base, 'deploy/kubernetes renders exactly its base')
  })

  t.test('what several replicas depend on', async (t) => {
    const deployment = one(base, 'Deployment')
    const pod = deployment.spec.template
    const podLabels: Record<string, string> = pod.metadata.labels
    const [container, ...others] = pod.spec.containers
    t.equal(others.length, 0, 'one container')
    t.match(container.image, /^registry\.invalid\//, 'the base names no pullable image: an overlay must set one')
    t.ok(deployment.spec.replicas >= 2, `several replicas (${deployment.spec.replicas})`)
    t.equal(deployment.spec.replicas, 3, 'three by default')
    t.ok(matches(deployment.spec.selector, podLabels), 'the Deployment selects its own pods')
    t.match(deployment.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } }, 'an upgrade never drops below the set number of replicas')

    const http = container.ports.find((p: Obj) => p.name === 'http')
    t.equal(http?.containerPort, 3000, 'the service listens on 3000 (the image\'s PORT)')
    t.match(container.livenessProbe, { httpGet: { path: '/healthz', port: 'http' } }, 'liveness on /healthz')
    t.match(container.readinessProbe, { httpGet: { path: '/readyz', port: 'http' } }, 'readiness on /readyz')
    t.ok(container.readinessProbe.timeoutSeconds > 5, '/readyz answers within its own 5 s database timeout, so the probe waits longer')

    const pdb = one(base, 'PodDisruptionBudget')
    t.ok(matches(pdb.spec.selector, podLabels), 'the PodDisruptionBudget selects the pods')
    t.ok((pdb.spec.minAvailable === undefined) !== (pdb.spec.maxUnavailable === undefined), 'minAvailable or maxUnavailable, one of them')
    if (pdb.spec.maxUnavailable !== undefined) t.ok(pdb.spec.maxUnavailable < deployment.spec.replicas, 'a drain keeps replicas serving')
    else t.ok(pdb.spec.minAvailable >= 1 && pdb.spec.minAvailable < deployment.spec.replicas, 'a drain keeps replicas serving and can still proceed')

    const service = one(base, 'Service')
    t.ok(Object.keys(service.spec.selector).length > 0 && Object.entries(service.spec.selector).every(([k, v]) => podLabels[k] === v), 'the Service selects the pods')
    t.match(service.spec.ports, [{ port: 3000, targetPort: 'http' }], 'the Service forwards port 3000 to the container\'s http port')

    const sa = one(base, 'ServiceAccount')
    t.equal(pod.spec.serviceAccountName, sa.metadata.name, 'the pods run as the base\'s ServiceAccount')
    t.equal(pod.spec.automountServiceAccountToken, false, 'with no Kubernetes token mounted (the service never uses its own)')
    t.equal(sa.automountServiceAccountToken, false)

    for (const from of container.envFrom) {
      const [kind, name] = from.configMapRef ? ['ConfigMap', from.configMapRef.name] : ['Secret', from.secretRef.name]
      t.ok(base.some((o) => o.kind === kind && o.metadata.name === name), `${kind} ${name} is in the base`)
    }
    for (const e of container.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef
      if (ref) t.ok(base.some((o) => o.metadata.name === ref.name), `${e.name} comes from ${ref.name}, which is in the base`)
    }
    const env = containerEnv(base, container)
    t.equal(env.REPLICA_MODE, 'shared', 'REPLICA_MODE=shared')
    t.equal(env.NODE_ENV, 'production')
    for (const name of ['JWT_SECRET', 'ENCRYPTION_KEY', 'MONGODB_URI']) {
      t.ok(base.some((o) => o.kind === 'Secret' && (o.data?.[name] ?? o.stringData?.[name]) !== undefined), `${name} comes from a Secret`)
      t.notOk(base.some((o) => o.kind === 'ConfigMap' && o.data?.[name] !== undefined), `${name} is in no ConfigMap`)
    }

    const graceMs = Number(env.SHUTDOWN_GRACE_MS ?? loadConfig({}).SHUTDOWN_GRACE_MS)
    const preStopSeconds = Number(container.lifecycle?.preStop?.exec?.command?.[1] ?? container.lifecycle?.preStop?.sleep?.seconds ?? 0)
    t.ok(pod.spec.terminationGracePeriodSeconds > graceMs / 1000 + preStopSeconds,
      `the kubelet waits ${pod.spec.terminationGracePeriodSeconds} s, longer than the preStop pause (${preStopSeconds} s) and SHUTDOWN_GRACE_MS (${graceMs} ms)`)

    t.match(pod.spec.securityContext, { runAsNonRoot: true, runAsUser: 1000 }, 'as the image\'s node user, never root')
    // The image these settings are for: its user (`node` is uid 1000 in the official Node images), its port,
    // and node as pid 1, so the kubelet's SIGTERM reaches the process that hands its leases back.
    const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8')
    t.match(dockerfile, /^FROM node:[^\n]+\n(?:.*\n)*USER node$/m, 'the runtime stage runs as node')
    t.match(dockerfile, new RegExp(`^EXPOSE ${http?.containerPort}$`, 'm'), 'the image exposes the container port')
    t.match(dockerfile, /^CMD \["node", /m, 'node is pid 1')
    t.match(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
    const tmp = container.volumeMounts.find((m: Obj) => m.mountPath === '/tmp')
    t.ok(tmp && pod.spec.volumes.some((v: Obj) => v.name === tmp.name && v.emptyDir), 'a writable /tmp (Git imports clone there) on an emptyDir')
    for (const r of ['cpu', 'memory']) {
      t.ok(container.resources?.requests?.[r], `a ${r} request`)
      t.ok(container.resources?.limits?.[r], `a ${r} limit`)
    }
    const spread = [
      ...(pod.spec.topologySpreadConstraints ?? []).map((c: Obj) => c.labelSelector),
      ...(pod.spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((p: Obj) => p.podAffinityTerm.labelSelector),
      ...(pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((p: Obj) => p.labelSelector),
    ]
    t.ok(spread.length > 0 && spread.every((s: Obj) => matches(s, podLabels)), 'replicas are spread apart by a rule that selects them')
  })

  t.test('the service accepts the configuration the pods get, and refuses the placeholders', async (t) => {
    const container = one(base, 'Deployment').spec.template.spec.containers[0]
    const env = containerEnv(base, container)
    const real = secrets()
    const config = loadConfig({ ...env, ...real })
    t.match(config, { REPLICA_MODE: 'shared', NODE_ENV: 'production', PORT: 3000, HOST: '0.0.0.0' })
    for (const name of Object.keys(real)) {
      // Each placeholder alone stops the start-up: a base applied without an overlay never runs on a known key.
      let refused: unknown
      try { loadConfig({ ...env, ...real, [name]: env[name] }) } catch (err) { refused = err }
      t.ok(refused instanceof ConfigError, `the base's placeholder ${name} is refused`)
      t.match((refused as Error)?.message, new RegExp(`^Invalid configuration: ${name} `), 'naming the variable')
      t.notMatch((refused as Error)?.message, env[name]!, 'without echoing the value')
    }
  })

  const sim = await startTestCluster(t)
  const dir = mkdtempSync(join(tmpdir(), 'deploy-manifests-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const kubectl = (args: string[], input?: string) => run(['--kubeconfig', sim.kubeconfigPath('token'), '--cache-dir', join(dir, 'cache'), ...args], input)
  // Every object in the cluster of the kinds the manifests hold, so "nothing was created" compares whole sets.
  const KINDS = 'namespaces,serviceaccounts,configmaps,secrets,services,deployments.apps,replicasets.apps,pods,poddisruptionbudgets.policy,roles,rolebindings,clusterroles,clusterrolebindings'
  const inventory = async () => {
    const r = await kubectl(['get', KINDS, '--all-namespaces', '-o', 'json'])
    if (r.code !== 0) throw new Error(r.stderr)
    return (JSON.parse(r.stdout).items as Obj[]).map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort()
  }
  const expectDryRun = (t: Test, r: { code: number; stdout: string; stderr: string }, objects: Obj[], verb: RegExp) => {
    t.equal(r.code, 0, r.code === 0 ? 'kubectl succeeded' : r.stderr)
    for (const o of objects) {
      t.match(r.stdout, new RegExp(`${o.kind.toLowerCase()}(\\.[a-z0-9.]+)?/${o.metadata.name} ${verb.source} \\(server dry run\\)`), `${o.kind} ${o.metadata.name} accepted by the server's dry run`)
    }
  }

  t.test('kubectl apply -k --dry-run=server against the simulator: accepted, nothing created', async (t) => {
    const before = await inventory()
    expectDryRun(t, await kubectl(['apply', '-k', ROOT, '--dry-run=server']), base, /created/)
    expectDryRun(t, await kubectl(['apply', '-k', ROOT, '--dry-run=server', '--server-side']), base, /serverside-applied/)
    t.same(await inventory(), before, 'the cluster holds exactly what it held before')
  })

  t.test('the server\'s dry run refuses broken manifests (it validates, not only echoes)', async (t) => {
    const mislabelled = structuredClone(base)
    one(mislabelled, 'Deployment').spec.template.metadata.labels = { 'app.kubernetes.io/name': 'something-else' }
    const r1 = await kubectl(['apply', '--dry-run=server', '-f', '-'], mislabelled.map((o) => stringify(o)).join('---\n'))
    t.not(r1.code, 0)
    t.match(r1.stderr, /selector. does not match template .labels/)
    const both = structuredClone(base)
    one(both, 'PodDisruptionBudget').spec.minAvailable = 1
    const r2 = await kubectl(['apply', '--dry-run=server', '--server-side', '-f', '-'], both.map((o) => stringify(o)).join('---\n'))
    t.not(r2.code, 0)
    t.match(r2.stderr, /minAvailable and maxUnavailable cannot be both set/)
  })

  t.test('the example overlay, with real secrets: valid, configured, accepted by a dry run', async (t) => {
    // A copy of the tree, so the secrets.env an operator writes never lands in the repository.
    const copy = join(dir, 'kubernetes')
    cpSync(ROOT, copy, { recursive: true })
    const real = secrets()
    writeFileSync(join(copy, 'overlays/example/secrets.env'), Object.entries(real).map(([k, v]) => `${k}=${v}`).join('\n') + '\n')
    const objects = await render(join(copy, 'overlays/example'))
    checkObjects(t, objects)
    const namespace = one(objects, 'Namespace').metadata.name
    t.ok(objects.every((o) => o.kind === 'Namespace' || o.metadata.namespace === namespace), `every object is in ${namespace}`)
    const container = one(objects, 'Deployment').spec.template.spec.containers[0]
    t.match(container.image, /^registry\.example\.com\/.+:0\.1\.0$/, 'the overlay names the image')
    const env = containerEnv(objects, container)
    t.match(env, { ...real, REPLICA_MODE: 'shared', TRUST_PROXY: 'true' }, 'the secrets replace the placeholders; settings merge with the base\'s')
    t.match(loadConfig(env), { REPLICA_MODE: 'shared', TRUST_PROXY: true }, 'the service starts with this configuration')

    // A server dry run cannot create the namespace the other objects need: create it, as an operator would first.
    t.equal((await kubectl(['create', 'namespace', namespace])).code, 0)
    const before = await inventory()
    expectDryRun(t, await kubectl(['apply', '-k', join(copy, 'overlays/example'), '--dry-run=server', '--server-side']), objects.filter((o) => o.kind !== 'Namespace'), /serverside-applied/)
    t.same(await inventory(), before, 'nothing created')
  })

  t.test('target-access: the least a serviceaccount-registered cluster needs, accepted by a dry run', async (t) => {
    const objects = await render(join(ROOT, 'target-access'))
    checkObjects(t, objects)
    const sa = one(objects, 'ServiceAccount')
    const namespace = sa.metadata.namespace
    const role = one(objects, 'Role')
    const clusterRole = one(objects, 'ClusterRole')
    const rules = [...role.rules, ...clusterRole.rules] as Obj[]
    t.notOk(rules.some((r) => [...r.verbs, ...r.resources, ...r.apiGroups].includes('*')), 'no wildcard')
    t.notOk(rules.some((r) => r.verbs.some((v: string) => ['escalate', 'bind', 'impersonate'].includes(v))), 'no verb that grants more rights')
    t.ok(clusterRole.rules.every((r: Obj) => r.verbs.every((v: string) => ['get', 'list'].includes(v))), 'cluster-wide: read only')
    t.notOk(clusterRole.rules.some((r: Obj) => r.resources.includes('secrets')), 'no Secret outside its namespace')
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      const b = one(objects, kind)
      t.match(b.roleRef, { kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole', name: (kind === 'RoleBinding' ? role : clusterRole).metadata.name })
      t.same(b.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace }], `${kind} grants to the deployer account in ${namespace}`)
    }
    t.match(one(objects, 'Secret'), { type: 'kubernetes.io/service-account-token', metadata: { annotations: { 'kubernetes.io/service-account.name': sa.metadata.name } } })

    t.equal((await kubectl(['create', 'namespace', namespace])).code, 0)
    const before = await inventory()
    expectDryRun(t, await kubectl(['apply', '-k', join(ROOT, 'target-access'), '--dry-run=server']), objects, /created/)
    expectDryRun(t, await kubectl(['apply', '-k', join(ROOT, 'target-access'), '--dry-run=server', '--server-side']), objects, /serverside-applied/)
    t.same(await inventory(), before, 'nothing created')
  })
}

const probe = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' })
if (probe.error || probe.status !== 0) {
  t.plan(0, `kubectl not found on PATH (${probe.error?.message ?? probe.stderr}); the manifests cannot be rendered without its kustomize`)
} else {
  await manifests()
}
