// Import through the KubeOrch UI adapter (CONTRACT.md §2.9, §3, §4 "Import", §8 row 12; OBSERVED rows 18,
// 18b): a compose upload as the UI sends it (multipart, field `file`) answered with the analysis within the
// request, its suggestedNodes in the canvas's shapes; create-workflow with the analysis the UI keeps, whose
// workflow gives those nodes back; a Git analysis answered async and followed on the reframed stream, read
// exactly as useImportStream reads it; refusals with both `error` and `message`.
import t, { type Test } from 'tap'
import { startTestApp } from '../../helpers/app.ts'
import { registerUser } from '../../helpers/auth.ts'
import { startTestCluster, simClusterBody } from '../../helpers/kube.ts'
import { startGitServer } from '../../helpers/git-server.ts'
import { listen, openStream } from '../../streams/sse-client.ts'
import { multipart } from '../../import/fixture.ts'
import { MAX_COMPOSE_BYTES } from '../../../schemas/import-analysis.ts'
import { uiJsonEventsOf as asTheUiParses } from './ui-stream.ts'

const sim = await startTestCluster(t)
const git = await startGitServer()
t.teardown(() => git.close())
const { app, logs } = await startTestApp(t, { ALLOW_INSECURE_CLUSTERS: true })
const base = await listen(app)
const owner = await registerUser(app)
const other = await registerUser(app)
const K = '/kubeorch/v1/api'
t.equal((await app.inject({ method: 'POST', url: '/v1/api/clusters', headers: owner.headers, payload: simClusterBody(sim, 'sim') })).statusCode, 201)

const CANVAS_TYPES = ['deployment', 'service', 'ingress', 'configmap', 'secret', 'persistentvolumeclaim', 'statefulset', 'job', 'cronjob', 'daemonset', 'hpa', 'networkpolicy', 'plugin']
const SECRET = 'pg-secret-value-77'
const COMPOSE = `services:
  web:
    image: nginx:1.27
    ports:
      - "8080:80"
    environment:
      DB_HOST: db
    depends_on:
      - db
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: ${SECRET}
    volumes:
      - dbdata:/var/lib/postgresql/data
volumes:
  dbdata: {}
`

const upload = (parts: Parameters<typeof multipart>[0], who = owner) => {
  const body = multipart(parts)
  return app.inject({ method: 'POST', url: `${K}/import/upload`, payload: body.payload, headers: { ...who.headers, ...body.headers } })
}
async function ui(who: typeof owner, method: 'GET' | 'POST', url: string, payload?: object) {
  const res = await app.inject({ method, url: `${K}${url}`, headers: who.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}

/** What the canvas needs of an analysis (CONTRACT §2.9, §3): nodes it can render, edges between them. */
function assertCanvasAnalysis(t: Test, a: any) {
  t.type(a.detectedType, 'string')
  t.ok(Array.isArray(a.services) && a.services.every((s: any) => typeof s.name === 'string'), 'services[].name')
  t.ok(Array.isArray(a.warnings) && a.warnings.every((w: unknown) => typeof w === 'string'), 'warnings are text (React renders them)')
  t.ok(Array.isArray(a.errors) && a.errors.every((e: any) => typeof e.code === 'string' && typeof e.message === 'string'), 'errors are {code, message}')
  t.ok(Array.isArray(a.suggestedNodes) && a.suggestedNodes.length > 0, 'suggestedNodes is a non-empty array')
  const ids = new Set<string>()
  for (const n of a.suggestedNodes) {
    t.type(n.id, 'string')
    t.ok(!ids.has(n.id), `node id ${n.id} is unique`)
    ids.add(n.id)
    t.ok(CANVAS_TYPES.includes(n.type), `${n.id}: type ${n.type} is a canvas type`)
    t.ok(Number.isFinite(n.position?.x) && Number.isFinite(n.position?.y), `${n.id}: position`)
    t.match(n.data, { id: n.id, name: String, namespace: 'default', templateId: `builtin:${n.type}` }, `${n.id}: common data`)
    t.same(a.layoutPositions[n.id], { x: n.position.x, y: n.position.y }, `${n.id}: layoutPositions`)
  }
  // The boxes the canvas draws (measured on it: about 290 px wide; workloads, with their inline image,
  // replicas and port fields, about 165 px tall; the others about 100 px) must not overlap.
  const box = (n: any) => ({ x: n.position.x, y: n.position.y, w: 290, h: ['deployment', 'statefulset', 'daemonset', 'job', 'cronjob'].includes(n.type) ? 165 : 100 })
  const overlapping = a.suggestedNodes.flatMap((n: any, i: number) => a.suggestedNodes.slice(i + 1).filter((m: any) => {
    const p = box(n), q = box(m)
    return p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h
  }).map((m: any) => `${n.id} × ${m.id}`))
  t.same(overlapping, [], 'no two nodes overlap as the canvas draws them')
  for (const e of a.suggestedEdges) {
    t.type(e.id, 'string')
    t.ok(ids.has(e.source) && ids.has(e.target), `edge ${e.id} joins suggested nodes`)
    t.ok(e.sourceHandle === null || typeof e.sourceHandle === 'string', 'sourceHandle is a string or null')
    t.ok(e.targetHandle === null || typeof e.targetHandle === 'string', 'targetHandle is a string or null')
  }
}

let analysis: any

t.test('Compose import (OBSERVED 18): multipart `file` → the analysis within the request, nodes the canvas renders', async (t) => {
  const res = await upload([['file', { filename: 'docker-compose.yml', content: COMPOSE }]])
  t.equal(res.statusCode, 200, res.body)
  const body = res.json()
  t.equal(body.fileName, 'docker-compose.yml')
  t.equal(body.fileSize, Buffer.byteLength(COMPOSE))
  t.equal(body.fileContent, COMPOSE)
  analysis = body.analysis
  assertCanvasAnalysis(t, analysis)
  t.equal(analysis.detectedType, 'docker-compose')
  t.same(analysis.services.map((s: any) => s.name).sort(), ['db', 'web'])
  t.same(analysis.volumes, [{ name: 'dbdata' }])
  t.equal(analysis.needsBuild, false)

  const byName = (type: string, name: string) => analysis.suggestedNodes.find((n: any) => n.type === type && n.data.name === name)
  const web = byName('deployment', 'web')
  t.match(web.data, { image: 'nginx:1.27', replicas: 1, port: 80 })
  const db = byName('statefulset', 'db')
  t.match(db.data, { image: 'postgres:16', replicas: 1, serviceName: 'db' })
  const claim = byName('persistentvolumeclaim', 'dbdata')
  t.match(claim.data, { storage: String, accessModes: ['ReadWriteOnce'] })
  t.match(db.data.volumeMounts, [{ type: 'persistentVolumeClaim', name: 'dbdata', nodeId: claim.id, mountPath: '/var/lib/postgresql/data' }])
  t.same(db.data._linkedPVCs, [claim.id])
  const secret = analysis.suggestedNodes.find((n: any) => n.type === 'secret')
  t.same(secret.data.keys, [{ id: 'key-POSTGRES_PASSWORD', name: 'POSTGRES_PASSWORD' }], 'secret keys are the canvas\'s {id, name} entries')
  t.equal(secret.data.secretType, 'Opaque')
  t.same(db.data._linkedSecrets, [secret.id])
  const service = byName('service', 'web')
  t.match(service.data, { serviceType: 'ClusterIP', port: 80, targetPort: 80, targetApp: 'web', _linkedDeployment: web.id })
  const wiring = analysis.suggestedEdges.find((e: any) => e.target === web.id && e.source === service.id)
  t.ok(wiring, 'the Service points at its workload, as the canvas draws it')
  t.equal(wiring.sourceHandle, 'output')
  t.notOk(JSON.stringify(analysis).includes(SECRET), 'no secret value in the analysis')
})

t.test('create-workflow with the UI\'s body {name, clusterId, analysis} → {workflow}; its GET gives the nodes back; it renders', async (t) => {
  const res = await ui(owner, 'POST', '/import/create-workflow', { name: analysis.services[0].name, clusterId: 'sim', analysis })
  t.equal(res.status, 201, JSON.stringify(res.body))
  const id = res.body.workflow.id
  t.type(id, 'string')
  t.equal(res.body.workflow.cluster_id, 'sim')
  const got = await app.inject({ url: `/v1/api/workflows/${id}`, headers: owner.headers })
  t.equal(got.statusCode, 200)
  t.same(got.json().nodes, analysis.suggestedNodes, 'the suggested nodes come back unchanged')
  t.same(got.json().edges, analysis.suggestedEdges)
  // The re-pointed edges still wire the graph: the Service selects web's pods on port 80.
  const manifests = await app.inject({ url: `/v1/api/workflows/${id}/manifests`, headers: { ...owner.headers, accept: 'application/json' } })
  t.equal(manifests.statusCode, 200, manifests.body.slice(0, 300))
  const objects = manifests.json().objects.map((o: any) => o.object)
  const diagnostics = manifests.json().diagnostics as Array<{ node_id: string; severity: string; message: string }>
  t.notOk(diagnostics.some((d) => /^service-/.test(d.node_id)), `the services render without remarks: ${JSON.stringify(diagnostics.filter((d) => /^service-/.test(d.node_id)))}`)
  const svc = objects.find((o: any) => o.kind === 'Service' && o.metadata.name === 'web')
  const deploy = objects.find((o: any) => o.kind === 'Deployment' && o.metadata.name === 'web')
  t.ok(svc && deploy)
  t.match(deploy.spec.template.metadata.labels, svc.spec.selector, 'the Service selects the Deployment\'s pods')
  t.equal(svc.spec.ports[0].targetPort, 80)

  const bad = await ui(owner, 'POST', '/import/create-workflow', { name: 'broken', clusterId: 'sim', analysis: { ...analysis, suggestedEdges: [{ id: 'e', source: 'nope', target: analysis.suggestedNodes[0].id }] } })
  t.equal(bad.status, 400, 'validated as a save is')
  t.match(bad.body, { error: String, message: String })
  const list = await app.inject({ url: '/v1/api/workflows', headers: owner.headers })
  t.notOk(list.json().workflows.some((w: any) => w.name === 'broken'), 'no empty workflow left behind')
  for (const body of [{ name: 'x', clusterId: 'sim' }, { name: 'x', clusterId: 'sim', analysis: 'text' }, { name: '', clusterId: 'sim', analysis }]) {
    const r = await ui(owner, 'POST', '/import/create-workflow', body)
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 60))
    t.match(r.body, { error: String, message: String })
  }
  const notMine = await ui(other, 'POST', '/import/create-workflow', { name: 'theirs', clusterId: 'sim', analysis })
  t.equal(notMine.status, 400, 'another user\'s cluster is refused as /v1/api refuses it')
  t.match(notMine.body, { error: /cluster_id names no cluster you may deploy to/, message: String })
})

t.test('an Ingress is drawn from its path to the Service, and still routes to it', async (t) => {
  const res = await upload([['file', { filename: 'docker-compose.yml', content: COMPOSE }], ['ingress', 'true']])
  t.equal(res.statusCode, 200, res.body)
  const a = res.json().analysis
  assertCanvasAnalysis(t, a)
  const ingress = a.suggestedNodes.find((n: any) => n.type === 'ingress')
  const service = a.suggestedNodes.find((n: any) => n.type === 'service' && n.data.name === 'web')
  t.ok(ingress && service)
  t.match(ingress.data.paths, [{ id: String, path: '/', serviceName: 'web', _linkedService: service.id }])
  const edge = a.suggestedEdges.find((e: any) => e.source === ingress.id)
  t.match(edge, { target: service.id, sourceHandle: ingress.data.paths[0].id, targetHandle: 'input' })
  const created = await ui(owner, 'POST', '/import/create-workflow', { name: 'with-ingress', clusterId: 'sim', analysis: a })
  t.equal(created.status, 201)
  const manifests = await app.inject({ url: `/v1/api/workflows/${created.body.workflow.id}/manifests`, headers: { ...owner.headers, accept: 'application/json' } })
  const objects = manifests.json().objects.map((o: any) => o.object)
  const rule = objects.find((o: any) => o.kind === 'Ingress').spec.rules[0].http.paths[0]
  t.match(rule.backend.service, { name: 'web', port: { number: 80 } }, 'the Ingress routes to the web Service')
})

t.test('Git analyze (the new-workflow page): {async, sessionId}, then the stream read as the UI reads it reaches complete', async (t) => {
  const repo = await git.addRepo('shop', { 'docker-compose.yml': COMPOSE.replace(SECRET, '${PG_PASSWORD:-x}'), 'api/Dockerfile': 'FROM alpine\n' })
  const res = await ui(owner, 'POST', '/import/analyze', { source: 'git_url', url: repo.url, branch: 'main' })
  t.equal(res.status, 201, JSON.stringify(res.body))
  t.equal(res.body.async, true)
  t.type(res.body.sessionId, 'string')
  t.type(res.body.message, 'string')
  const stream = await openStream(base, `${K}/import/${res.body.sessionId}/stream`, { authorization: `Bearer ${owner.token}`, accept: 'text/event-stream' })
  t.equal(stream.status, 200)
  await stream.ended
  const events = asTheUiParses(stream.raw())
  t.equal(events[0].type, 'metadata')
  t.ok(['pending', 'cloning', 'analyzing', 'completed', 'failed'].includes(events[0].data.status))
  t.type(events[0].data.progress, 'number')
  t.type(events[0].data.currentStage, 'string')
  const last = events.at(-1)!
  t.equal(last.type, 'complete', events.map((e) => e.type).join(','))
  const a = (last.data.data ?? last.data).analysis
  assertCanvasAnalysis(t, a)
  t.same(a.services.map((s: any) => s.name).sort(), ['db', 'web'])
  for (const e of events.filter((x) => x.type === 'progress')) {
    const p = e.data.data ?? e.data
    t.ok(['pending', 'cloning', 'analyzing', 'completed', 'failed'].includes(p.status))
    t.type(p.current_stage, 'string')
  }
  // The other user cannot follow it.
  const theirs = await openStream(base, `${K}/import/${res.body.sessionId}/stream`, { authorization: `Bearer ${other.token}` })
  t.equal(theirs.status, 404)
})

t.test('a repository without compose: dockerfile analysis with a build to start, and a failing one streams failed', async (t) => {
  const repo = await git.addRepo('solo', { 'Dockerfile': 'FROM alpine\n' })
  const res = await ui(owner, 'POST', '/import/analyze', { source: 'git_url', url: repo.url, branch: 'main' })
  const stream = await openStream(base, `${K}/import/${res.body.sessionId}/stream`, { authorization: `Bearer ${owner.token}` })
  await stream.ended
  const a = asTheUiParses(stream.raw()).at(-1)!.data.analysis
  t.equal(a.detectedType, 'dockerfile')
  t.equal(a.needsBuild, true)
  t.match(a.sourceBuildConfig, { repoUrl: repo.url, branch: 'main', buildContext: '.', useNixpacks: false })
  t.equal(a.suggestedNodes[0].data.needsBuild, true)

  const missing = await ui(owner, 'POST', '/import/analyze', { source: 'git_url', url: repo.url, branch: 'no-such-branch' })
  t.equal(missing.status, 201)
  const failing = await openStream(base, `${K}/import/${missing.body.sessionId}/stream`, { authorization: `Bearer ${owner.token}` })
  await failing.ended
  const end = asTheUiParses(failing.raw()).at(-1)!
  t.equal(end.type, 'failed')
  t.type(end.data.error_message, 'string')
})

t.test('refusals: a bad compose file and too large a file are clear 4xx at once, never a hang', async (t) => {
  const broken = await upload([['file', { filename: 'docker-compose.yml', content: 'services:\n  web:\n    image: [unclosed\n' }]])
  t.equal(broken.statusCode, 400)
  t.match(broken.json(), { error: String, message: String })
  const cycle = await upload([['file', { filename: 'compose.yaml', content: 'services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: y\n    depends_on: [a]\n' }]])
  t.equal(cycle.statusCode, 400)
  t.match(cycle.json().error, /cycle/)
  const huge = await upload([['file', { filename: 'docker-compose.yml', content: `# ${'x'.repeat(MAX_COMPOSE_BYTES)}\nservices: {}\n` }]])
  t.equal(huge.statusCode, 413)
  t.match(huge.json(), { error: String, message: String })
  const noFile = await upload([['namespace', 'default']])
  t.equal(noFile.statusCode, 400)
  const badNs = await upload([['file', { filename: 'docker-compose.yml', content: COMPOSE }], ['namespace', 'Not A Label']])
  t.equal(badNs.statusCode, 400)
  const json = await ui(owner, 'POST', '/import/upload', { file: COMPOSE })
  t.equal(json.status, 415)
  const badSource = await ui(owner, 'POST', '/import/analyze', { source: 'svn', url: 'https://example.com/x' })
  t.equal(badSource.status, 400)
  t.match(badSource.body, { error: String, message: String })
  const noUrl = await ui(owner, 'POST', '/import/analyze', { source: 'github', branch: 'main' })
  t.equal(noUrl.status, 400)
  t.notOk(logs.join('').includes(SECRET), 'the compose file\'s secret is in no log line')
})
