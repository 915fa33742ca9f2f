// Each fixture compose file → its expected graph (kinds, names, edges, warnings by service and key), every
// generated node valid and rendered without error by the real renderer, and no secret value anywhere.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Value } from 'typebox/value'
import { analyzeCompose, analyzeFileTree, ImportError, MAX_COMPOSE_BYTES, type Analysis } from '../../../src/services/import/index.ts'
import { renderWorkflow } from '../../../src/manifests/index.ts'
import { BuildSource, NodeDataSchemas, Probe, type NodeType } from '../../../schemas/nodes.ts'
import { AnalysisSchema } from '../../../schemas/import-analysis.ts'

const dir = join(import.meta.dirname, '..', 'fixtures')
const read = (name: string) => readFileSync(join(dir, name), 'utf8')
const SECRETS = { DB_PASSWORD: 'hunter2-db-password', DB_ROOT_PASSWORD: 'hunter2-root-password', API_KEY: 'sk-live-hunter2' }
const files = new Map([
  ['common/services.yml', read('common/services.yml')],
  ['config/app.toml', read('config/app.toml')],
  ['secrets/db_password.txt', read('secrets/db_password.txt')],
])

function analyze(name: string, extra: Parameters<typeof analyzeCompose>[1] = {}): Analysis {
  return analyzeCompose(read(name), { env: SECRETS, files, ...extra })
}

async function rendersCleanly(t: Test, a: Analysis): Promise<void> {
  t.ok(Value.Check(AnalysisSchema, a), 'the analysis matches its schema')
  for (const n of a.nodes) {
    t.ok(Value.Check(NodeDataSchemas[n.type as NodeType], n.data), `${n.id} data is valid`)
    if (n.data.readinessProbe !== undefined) t.ok(Value.Check(Probe, n.data.readinessProbe), `${n.id} probe is valid`)
    if (n.data.build !== undefined) t.ok(Value.Check(BuildSource, n.data.build) && typeof n.data.needsBuild === 'boolean', `${n.id} build source is valid`)
  }
  const r = await renderWorkflow({ nodes: a.nodes, edges: a.edges }, { workflowId: 'wf-import', plugins: () => null, revealSecrets: false })
  t.same(r.diagnostics.filter((d) => d.severity === 'error'), [], 'renders without errors')
  // The only render warnings are the start-up order edges, which the renderer does not wire.
  const dependsOn = new Set(a.edges.filter((e) => e.data?.relation === 'depends_on').map((e) => e.id))
  for (const w of r.diagnostics.filter((d) => d.severity === 'warning')) t.ok([...dependsOn].some((id) => w.message.includes(JSON.stringify(id))), `expected render warning: ${w.message}`)
  const workloads = a.nodes.filter((n) => ['deployment', 'statefulset', 'daemonset'].includes(n.type)).length
  t.equal(r.objects.filter((o) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(o.object.kind)).length, workloads, 'one workload object per workload node')
  const text = JSON.stringify(a) + JSON.stringify(r)
  for (const v of [...Object.values(SECRETS), 's3cr3t-from-dotenv', 'do-not-leak-this-password']) t.notOk(text.includes(v), 'no secret value in the output')
}

const kinds = (a: Analysis) => Object.fromEntries(a.nodes.map((n) => [n.id, n.type]))
const edgeIds = (a: Analysis) => a.edges.map((e) => e.id).sort()
const warned = (a: Analysis) => a.warnings.map((w) => `${w.service ?? ''}/${w.key}`)
const data = (a: Analysis, id: string) => a.nodes.find((n) => n.id === id)!.data as Record<string, any>

t.test('web + database + cache (WordPress, MySQL, Redis)', async (t) => {
  const a = analyze('wordpress.yaml', { ingress: { host: 'example.com' } })
  t.same(a.services.map((s) => [s.name, s.kind]), [['cache', 'deployment'], ['db', 'statefulset'], ['wordpress', 'statefulset']], 'dependencies first; named volumes make StatefulSets')
  t.same(kinds(a), {
    'persistentvolumeclaim-db-data': 'persistentvolumeclaim', 'persistentvolumeclaim-wp-content': 'persistentvolumeclaim',
    'deployment-cache': 'deployment', 'service-cache': 'service',
    'statefulset-db': 'statefulset', 'configmap-db-env': 'configmap', 'secret-db-env': 'secret', 'service-db': 'service',
    'statefulset-wordpress': 'statefulset', 'configmap-wordpress-env': 'configmap', 'secret-wordpress-env': 'secret',
    'service-wordpress': 'service', 'ingress-wordpress': 'ingress',
  })
  t.same(edgeIds(a), [
    'configmap-db-env--statefulset-db', 'configmap-wordpress-env--statefulset-wordpress',
    'deployment-cache--service-cache', 'deployment-cache--statefulset-wordpress',
    'persistentvolumeclaim-db-data--statefulset-db', 'persistentvolumeclaim-wp-content--statefulset-wordpress',
    'secret-db-env--statefulset-db', 'secret-wordpress-env--statefulset-wordpress',
    'service-wordpress--ingress-wordpress', 'statefulset-db--service-db', 'statefulset-db--statefulset-wordpress',
    'statefulset-wordpress--service-wordpress',
  ])
  t.same(a.edges.find((e) => e.id === 'statefulset-db--statefulset-wordpress')!.data, { relation: 'depends_on', condition: 'service_healthy' })
  t.same(data(a, 'secret-db-env').keys, ['MYSQL_PASSWORD', 'MYSQL_ROOT_PASSWORD'], 'sensitive names are Secret keys')
  t.same(data(a, 'configmap-db-env').data, { MYSQL_DATABASE: 'wordpress', MYSQL_USER: 'wordpress' })
  t.same(data(a, 'statefulset-wordpress').resources, { requests: { memory: '256Mi' }, limits: { cpu: '500m', memory: '512Mi' } })
  t.same(data(a, 'statefulset-db').readinessProbe, { exec: { command: ['mysqladmin', 'ping', '-h', 'localhost'] }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 5, initialDelaySeconds: 90 })
  t.same(data(a, 'statefulset-db').args, ['--default-authentication-plugin=mysql_native_password', '--innodb-buffer-pool-size=256M'], 'a command string is split into args')
  t.same(data(a, 'service-wordpress').ports, [{ name: 'tcp-80', port: 80, targetPort: 80, protocol: 'TCP' }], 'the Service keeps the container port, as the compose network does')
  t.same(data(a, 'ingress-wordpress').host, 'wordpress.example.com')
  t.same(data(a, 'service-db').ports[0].port, 3306, 'MySQL without ports gets its usual port so WordPress reaches db:3306')
  t.same(warned(a), ['db/expose', 'cache/expose'].sort(), 'inferred ports are reported')
  await rendersCleanly(t, a)
})

t.test('profiles: default only unprofiled services; a chosen profile adds its services', async (t) => {
  const plain = analyze('profiles.yaml')
  t.same(plain.services.map((s) => s.name), ['db', 'app'])
  const debug = analyze('profiles.yaml', { profiles: ['debug'] })
  t.same(debug.services.map((s) => s.name).sort(), ['adminer', 'app', 'db', 'mailhog'])
  t.same(debug.services.find((s) => s.name === 'mailhog')!.ports.map((p) => [p.target, p.internal]), [[1025, true], [8025, true]], 'expose → cluster-internal ports')
  const tools = analyze('profiles.yaml', { profiles: ['tools'] })
  t.same(tools.services.find((s) => s.name === 'migrate')!.depends_on, [{ service: 'db', condition: 'service_started' }])
  await rendersCleanly(t, debug)
})

t.test('interpolation from env and .env content; sensitive values stay out', async (t) => {
  const a = analyzeCompose(read('interpolation.yaml'), { env_file: read('interpolation.env'), env: { API_PORT: '9000', LOG_LEVEL: 'warn' } })
  const api = data(a, 'deployment-api')
  t.equal(api.image, 'docker.io/example/api:2.1.0', '${VAR:-d} and ${VAR-d}')
  t.equal(api.replicas, 3, 'an interpolated replica count is a number')
  t.same(api.args, ['serve', '--workers', '4', '--db-password', '$(DB_PASS)'], 'a sensitive variable in a command becomes a $(VAR) reference')
  t.same(data(a, 'configmap-api-env').data, {
    EMPTY_DEFAULT: 'fallback', EMPTY_SET: '', FEATURE: 'enabled', LOG_LEVEL: 'warn', NESTED: 'nested-default', PLAIN_URL: 'https://example.com/docs', PRICE: '$5',
  }, 'env wins over .env; :- vs -, :+, nesting, $$')
  t.same(data(a, 'secret-api-env').keys, ['API_TOKEN', 'DATABASE_URL', 'DB_PASS'], 'a value built from a sensitive variable is a Secret key')
  t.same(a.services[0].ports, [{ target: 8000, published: 9000, protocol: 'TCP', internal: false }])
  t.throws(() => analyzeCompose('services:\n  a:\n    image: ${IMG:?an image is required}\n'), new ImportError('required variable IMG is missing a value: an image is required (services.a.image)'))
  t.throws(() => analyzeCompose('services:\n  a:\n    image: nginx\n    command: echo $\n'), /invalid interpolation format in services\.a\.command/)
  await rendersCleanly(t, a)
  t.notOk(JSON.stringify(a).includes('s3cr3t-from-dotenv'))
})

t.test('extends within the file and from another file of the repository', async (t) => {
  const a = analyze('extends.yaml')
  t.same(a.services.map((s) => s.name), ['base', 'scheduler', 'worker-high', 'worker-low'])
  t.same(data(a, 'configmap-worker-high-env').data, { LOG_FORMAT: 'json', QUEUE: 'high' }, 'mappings merge, the extension wins')
  t.equal(data(a, 'deployment-worker-high').replicas, 2)
  t.same(data(a, 'deployment-worker-low').resources, { limits: { cpu: '1', memory: '1Gi' } }, 'inherited resources')
  t.same(data(a, 'deployment-worker-low').args, ['worker', '--concurrency', '1'])
  t.ok(warned(a).includes('worker-low/logging'), 'a YAML merge key brings logging in, which is reported')
  t.same(data(a, 'deployment-scheduler').image, 'ghcr.io/example/cron:1.0', 'extends: file: reads the other file')
  const without = analyzeCompose(read('extends.yaml'))
  t.ok(without.warnings.some((w) => w.service === 'scheduler' && w.key === 'extends'), 'a missing extends file is a warning')
  t.ok(without.errors.some((e) => e.service === 'scheduler' && e.key === 'image'), 'and the service without an image is an error')
  t.throws(() => analyzeCompose('services:\n  a: {image: x, extends: b}\n  b: {image: y, extends: a}\n'), /extends: a cycle/)
  await rendersCleanly(t, a)
})

t.test('healthchecks → readiness probes (CMD, CMD-SHELL, disable, NONE; durations)', async (t) => {
  const a = analyze('healthchecks.yaml')
  t.same(data(a, 'deployment-web').readinessProbe, { exec: { command: ['/bin/sh', '-c', 'curl -fsS http://localhost/ || exit 1'] }, periodSeconds: 90, timeoutSeconds: 3, failureThreshold: 2, initialDelaySeconds: 40 })
  t.same(data(a, 'deployment-api').readinessProbe, { exec: { command: ['/app/healthcheck', '--quick'] }, periodSeconds: 30, timeoutSeconds: 30, failureThreshold: 3 }, 'Compose defaults')
  t.notOk(data(a, 'deployment-legacy').readinessProbe, 'disable: true → no probe')
  t.notOk(data(a, 'deployment-worker').readinessProbe, 'NONE → no probe')
  t.same(data(a, 'service-web').ports.map((p: { port: number }) => p.port), [80, 443])
  await rendersCleanly(t, a)
})

t.test('build contexts → workloads that need a build, context prefilled', async (t) => {
  const a = analyzeCompose(read('build.yaml'), { repo: { repo_url: 'https://git.example.com/team/app.git', branch: 'main' } })
  t.same(a.services.map((s) => [s.name, s.needs_build]), [['backend', true], ['frontend', true], ['tagged', false]])
  t.same(data(a, 'deployment-backend'), {
    name: 'backend', image: 'backend:latest', needsBuild: true, port: 8080,
    build: { context: 'backend', dockerfile: 'docker/Dockerfile.prod', target: 'runtime', repoUrl: 'https://git.example.com/team/app.git', branch: 'main' },
  })
  t.same(data(a, 'deployment-tagged').image, 'registry.example.com/team/tagged:1.0', 'image + build: the image names the build')
  t.same(warned(a), ['backend/build.args'])
  await rendersCleanly(t, a)
})

t.test('bind mounts and host access → warnings naming service and key', async (t) => {
  const a = analyze('bind-mounts.yaml')
  t.same([...new Set(warned(a))].sort(), [
    'agent/cap_add', 'agent/devices', 'agent/ipc', 'agent/network_mode', 'agent/pid', 'agent/privileged', 'agent/volumes',
    'web/restart', 'web/user', 'web/volumes',
  ])
  t.equal(a.warnings.filter((w) => w.service === 'web' && w.key === 'volumes').length, 3, 'two binds and an anonymous volume')
  t.equal(a.services.find((s) => s.name === 'web')!.kind, 'statefulset', 'the named cache volume makes it stateful')
  t.same(data(a, 'statefulset-web').volumeMounts, [{ name: 'cache', mountPath: '/var/cache/nginx' }])
  await rendersCleanly(t, a)
})

t.test('top-level secrets and configs → Secret (keys only) and ConfigMap nodes, mounted where Compose mounts them', async (t) => {
  const a = analyze('secrets-configs.yaml')
  t.same(data(a, 'secret-db-password'), { name: 'db-password', keys: ['db_password'] })
  t.same(data(a, 'configmap-app-config').data, { app_config: 'mode = "production"\n' }, 'config file content from the repository')
  t.same(data(a, 'deployment-api').volumeMounts, [
    { name: 'db-password', mountPath: '/run/secrets/db_password', readOnly: true, subPath: 'db_password' },
    { name: 'api-key', mountPath: '/run/secrets/keys/api.key', readOnly: true, subPath: 'api_key' },
    { name: 'app-config', mountPath: '/app_config', readOnly: true, subPath: 'app_config' },
    { name: 'nginx-conf', mountPath: '/etc/nginx/conf.d/default.conf', readOnly: true, subPath: 'nginx_conf' },
  ])
  t.same(a.edges.filter((e) => e.target === 'deployment-proxy').map((e) => [e.source, e.targetHandle]), [['secret-tls-cert', 'volume'], ['configmap-nginx-conf', 'volume']])
  const r = await renderWorkflow({ nodes: a.nodes, edges: a.edges }, { workflowId: 'wf', plugins: () => null, revealSecrets: false })
  const proxy = r.objects.find((o) => o.object.kind === 'Deployment' && o.object.metadata.name === 'proxy')!.object as any
  t.same(proxy.spec.template.spec.containers[0].volumeMounts.find((m: any) => m.name === 'tls-cert'), { name: 'tls-cert', mountPath: '/run/secrets/tls_cert', readOnly: true, subPath: 'tls_cert' })
  t.ok(proxy.spec.template.spec.volumes.some((v: any) => v.secret?.secretName === 'tls-cert'))
  await rendersCleanly(t, a)
})

t.test('fatal problems: malformed YAML, not a compose file, schema violations, a YAML bomb, a 10 MB file', async (t) => {
  t.throws(() => analyzeCompose(read('malformed.yaml')), /not valid YAML \(line 6, column \d+\)/)
  t.throws(() => analyzeCompose('- just\n- a list\n'), /not a compose file/)
  t.throws(() => analyzeCompose('name: x\nvolumes: {}\n'), /not a compose file: it has no services/)
  t.throws(() => analyzeCompose('services:\n  web:\n    image: nginx\n    portz: [80]\n'), new ImportError('not a valid compose file: services.web: unknown key "portz"'))
  t.throws(() => analyzeCompose('services:\n  web:\n    image: nginx\n    deploy: {replicas: many}\n'), /services\.web\.deploy\.replicas: must be integer/)
  let start = performance.now()
  t.throws(() => analyzeCompose(read('bomb.yaml')), /expands YAML aliases more than \d+ times/)
  const bombMs = performance.now() - start
  t.ok(bombMs < 250, `the YAML bomb is refused in ${bombMs.toFixed(1)} ms`)
  const big = `services:\n  web:\n    image: nginx\n    environment:\n${'      K: "' + 'x'.repeat(100) + '"\n'.repeat(1)}${'# padding padding padding padding padding padding padding padding\n'.repeat(160_000)}`
  t.ok(Buffer.byteLength(big) > 10_000_000)
  start = performance.now()
  const err = (() => { try { analyzeCompose(big) } catch (e) { return e as ImportError } })()
  const bigMs = performance.now() - start
  t.equal(err?.statusCode, 413)
  t.match(err?.message, `at most ${MAX_COMPOSE_BYTES} are accepted`)
  t.ok(bigMs < 100, `the 10 MB file is refused in ${bigMs.toFixed(1)} ms`)
  t.throws(() => analyzeCompose('services:\n  a: {image: x, depends_on: [b]}\n  b: {image: y, depends_on: [a]}\n'), /depends_on forms a cycle/)
})

t.test('a repository tree: compose file at path, else at the root, else Dockerfiles', async (t) => {
  const tree = new Map([
    ['deploy/compose.yaml', 'services:\n  web:\n    build: ../web\n    env_file: [web.env]\n    ports: ["80:8080"]\n'],
    ['deploy/web.env', 'GREETING=hello\nSESSION_SECRET=abc123-not-stored\n'],
    ['web/Dockerfile', 'FROM node:20\n'],
  ])
  const a = analyzeFileTree(tree, { repo_url: 'https://git.example.com/a/b.git', branch: 'dev', path: 'deploy' })
  t.same(data(a, 'deployment-web').build, { context: 'web', repoUrl: 'https://git.example.com/a/b.git', branch: 'dev' })
  t.same(data(a, 'configmap-web-env').data, { GREETING: 'hello' })
  t.same(data(a, 'secret-web-env').keys, ['SESSION_SECRET'])
  t.notOk(JSON.stringify(a).includes('abc123'))
  const only = analyzeFileTree(new Map([['services/api/Dockerfile', 'FROM x'], ['services/worker/Dockerfile.prod', 'FROM y'], ['README.md', '']]), { repo_url: 'https://git.example.com/a/shop.git' })
  t.same(only.nodes.map((n) => [n.id, n.data.build]), [
    ['deployment-api', { context: 'services/api', repoUrl: 'https://git.example.com/a/shop.git' }],
    ['deployment-worker-prod', { context: 'services/worker', dockerfile: 'Dockerfile.prod', repoUrl: 'https://git.example.com/a/shop.git' }],
  ])
  t.ok(only.services.every((s) => s.needs_build))
  await rendersCleanly(t, only)
  t.throws(() => analyzeFileTree(new Map([['README.md', 'hi']]), { repo_url: 'https://x/y.git' }), /no compose file .* and no Dockerfile found/)
})
