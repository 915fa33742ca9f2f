// POST /import/upload: a compose file as multipart/form-data (field `file`, optional option fields), with the
// analysis's size limit (413), clear 400s for a wrong field or bad options, 415 for a body that is not
// multipart. Then the README's walkthrough end to end: upload, follow the stream, create a workflow on a
// (simulated) cluster and run it.
import t from 'tap'
import { importFixture, multipart, WEB_AND_DB } from './fixture.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { MAX_COMPOSE_BYTES } from '../../schemas/import-analysis.ts'

const sim = await startTestCluster(t)
const f = await importFixture(t, { RUN_READY_TIMEOUT_MS: 10_000, RUN_REPLY_WAIT_MS: 30_000 })
const { owner, call } = f

const upload = (parts: Parameters<typeof multipart>[0], headers: Record<string, string> = {}) => {
  const body = multipart(parts)
  return f.app.inject({ method: 'POST', url: '/v1/api/import/upload', payload: body.payload, headers: { ...owner.headers, ...body.headers, ...headers } })
}

t.test('an upload: 201 pending with the file name; the analysis completes with the options applied', async (t) => {
  const compose = WEB_AND_DB.replace('volumes:\n  dbdata', '  admin:\n    image: adminer\n    profiles: [debug]\n    ports: ["8081:8080"]\nvolumes:\n  dbdata')
  const res = await upload([['file', { filename: 'docker-compose.yml', content: compose }], ['profiles', 'debug'], ['env', '{"TAG":"1"}'], ['ingress', 'true']])
  t.equal(res.statusCode, 201, res.body)
  t.match(res.json(), { source: 'compose', status: 'pending', filename: 'docker-compose.yml' })
  const session = await f.finished(owner, res.json().id)
  t.equal(session.status, 'completed', session.error)
  t.same(session.analysis.services.map((s: { name: string }) => s.name).sort(), ['admin', 'db', 'web'], 'the chosen profile is active')
  t.ok(session.analysis.nodes.some((n: { type: string }) => n.type === 'ingress'), 'ingress asked for')
})

t.test('too large: 413 {error}, nothing recorded', async (t) => {
  const before = await f.app.db.collection('import_sessions').countDocuments({})
  const res = await upload([['file', { filename: 'compose.yaml', content: `services: {}\n#${'x'.repeat(MAX_COMPOSE_BYTES)}` }]])
  t.equal(res.statusCode, 413)
  t.same(res.json(), { error: `the compose file is larger than ${MAX_COMPOSE_BYTES} bytes` })
  t.equal(await f.app.db.collection('import_sessions').countDocuments({}), before)
})

t.test('wrong fields and bad options: 400 naming them', async (t) => {
  const cases: Array<[Parameters<typeof multipart>[0], RegExp]> = [
    [[['compose', { filename: 'compose.yaml', content: 'services: {}' }]], /unexpected file field "compose".*field `file`/],
    [[['profiles', 'debug']], /the compose file is missing/],
    [[['file', { filename: 'compose.yaml', content: '' }]], /empty/],
    [[['file', { filename: 'compose.yaml', content: 'services: {}' }], ['colour', 'blue']], /unexpected field "colour"/],
    [[['file', { filename: 'compose.yaml', content: 'services: {}' }], ['env', 'TAG=1']], /field env must be a JSON object/],
    [[['file', { filename: 'compose.yaml', content: 'services: {}' }], ['env', '{"TAG":1}']], /field env\/TAG must be string/],
    [[['file', { filename: 'compose.yaml', content: 'services: {}' }], ['profiles', 'no spaces allowed']], /field profiles/],
    [[['file', { filename: 'a.yaml', content: 'services: {}' }], ['file', { filename: 'b.yaml', content: 'services: {}' }]], /one file/],
  ]
  for (const [parts, message] of cases) {
    const res = await upload(parts)
    t.equal(res.statusCode, 400, `${message}: ${res.body}`)
    t.match(res.json().error, message)
  }
})

t.test('not multipart: 415', async (t) => {
  const json = await f.app.inject({ method: 'POST', url: '/v1/api/import/upload', headers: owner.headers, payload: { file: 'services: {}' } })
  t.same([json.statusCode, json.json()], [415, { error: 'send the compose file as multipart/form-data, in the field `file`' }])
  const text = await f.app.inject({ method: 'POST', url: '/v1/api/import/upload', headers: { ...owner.headers, 'content-type': 'text/plain' }, payload: 'services: {}' })
  t.equal(text.statusCode, 415)
})

t.test('upload, follow the stream, create a workflow on a cluster and run it', async (t) => {
  t.equal((await call(owner, 'POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))).status, 201)
  const res = await upload([['file', { filename: 'docker-compose.yml', content: WEB_AND_DB }]])
  t.equal(res.statusCode, 201)
  const stream = await f.follow(owner, res.json().id)
  t.equal(stream.events.at(-1)!.type, 'complete')
  const created = await call(owner, 'POST', '/v1/api/import/create-workflow', { import_id: res.json().id, name: 'shop', cluster_id: 'sim' })
  t.equal(created.status, 201, JSON.stringify(created.body))
  t.equal(created.body.cluster_id, 'sim')
  const run = await call(owner, 'POST', `/v1/api/workflows/${created.body.id}/run`, { namespace: 'shop' })
  t.equal(run.status, 200, JSON.stringify(run.body))
  t.equal(run.body.status, 'completed', run.body.error)
  const kinds = run.body.nodes.map((n: { kind: string; name: string }) => `${n.kind}/${n.name}`).sort()
  t.ok(kinds.includes('Deployment/web') && kinds.includes('Service/web'), kinds.join(', '))
  t.ok(kinds.some((k: string) => k.startsWith('StatefulSet/db')), 'the database keeps its data: a StatefulSet')
})
