// BOLA matrix over the import routes: a second user naming the first user's session or workflow gets the
// same 404 as for an id that does not exist, on every route, and nothing of the first user's changes.
// Without a token every route is 401.
import t from 'tap'
import { importFixture, multipart, sampleAnalysis } from './fixture.ts'
import { openStream } from '../streams/sse-client.ts'
import { newId } from '../../src/repositories/ids.ts'

const f = await importFixture(t)
const { owner, other, call } = f

const ownersSession = await f.seedSession(owner, sampleAnalysis())
const ownersWorkflow = (await call(owner, 'POST', '/v1/api/workflows', { name: 'mine' })).body
const othersSession = await f.seedSession(other, sampleAnalysis())
const othersWorkflow = (await call(other, 'POST', '/v1/api/workflows', { name: 'theirs' })).body
const missing = newId()

t.test('another user\'s session or workflow: 404, the same answer as a missing one', async (t) => {
  const cases: Array<[string, () => Promise<{ status: number; body: unknown }>, () => Promise<{ status: number; body: unknown }>]> = [
    ['GET /import/:id',
      () => call(other, 'GET', `/v1/api/import/${ownersSession}`),
      () => call(other, 'GET', `/v1/api/import/${missing}`)],
    ['GET /import/:id/stream',
      async () => { const s = await openStream(f.base, `/v1/api/import/${ownersSession}/stream`, other.headers); return { status: s.status, body: s.body } },
      async () => { const s = await openStream(f.base, `/v1/api/import/${missing}/stream`, other.headers); return { status: s.status, body: s.body } }],
    ['POST /import/apply (their session, own workflow)',
      () => call(other, 'POST', '/v1/api/import/apply', { import_id: ownersSession, workflow_id: othersWorkflow.id, mode: 'merge' }),
      () => call(other, 'POST', '/v1/api/import/apply', { import_id: missing, workflow_id: othersWorkflow.id, mode: 'merge' })],
    ['POST /import/apply (own session, their workflow)',
      () => call(other, 'POST', '/v1/api/import/apply', { import_id: othersSession, workflow_id: ownersWorkflow.id, mode: 'replace' }),
      () => call(other, 'POST', '/v1/api/import/apply', { import_id: othersSession, workflow_id: missing, mode: 'replace' })],
    ['POST /import/create-workflow',
      () => call(other, 'POST', '/v1/api/import/create-workflow', { import_id: ownersSession, name: 'stolen' }),
      () => call(other, 'POST', '/v1/api/import/create-workflow', { import_id: missing, name: 'stolen' })],
  ]
  for (const [name, foreign, absent] of cases) {
    const [a, b] = [await foreign(), await absent()]
    t.equal(a.status, 404, `${name}: 404`)
    t.same(a.body, b.body, `${name}: same body as a missing id (${JSON.stringify(a.body)})`)
  }
  t.same((await call(owner, 'GET', `/v1/api/workflows/${ownersWorkflow.id}`)).body.nodes, [], 'the owner\'s workflow is untouched')
  t.equal(await f.app.db.collection('workflows').countDocuments({ name: 'stolen' }), 0)
})

t.test('the owner reaches both', async (t) => {
  t.equal((await call(owner, 'GET', `/v1/api/import/${ownersSession}`)).status, 200)
  t.equal((await call(owner, 'POST', '/v1/api/import/apply', { import_id: ownersSession, workflow_id: ownersWorkflow.id, mode: 'merge' })).status, 200)
})

t.test('an id that is not one of ours: 404 without a query', async (t) => {
  const res = await call(owner, 'GET', '/v1/api/import/not-an-id')
  t.same([res.status, res.body], [404, { error: 'import session not found' }])
})

t.test('no token: 401 on every import route', async (t) => {
  const upload = multipart([['file', { filename: 'compose.yaml', content: 'services: {}\n' }]])
  const requests = [
    { method: 'POST' as const, url: '/v1/api/import/analyze', payload: { source: 'compose', content: 'services: {}' } },
    { method: 'POST' as const, url: '/v1/api/import/upload', payload: upload.payload, headers: upload.headers },
    { method: 'POST' as const, url: '/v1/api/import/apply', payload: { import_id: ownersSession, workflow_id: ownersWorkflow.id, mode: 'merge' } },
    { method: 'POST' as const, url: '/v1/api/import/create-workflow', payload: { import_id: ownersSession, name: 'x' } },
    { method: 'GET' as const, url: `/v1/api/import/${ownersSession}` },
    { method: 'GET' as const, url: `/v1/api/import/${ownersSession}/stream` },
  ]
  for (const r of requests) {
    const res = await f.app.inject(r)
    t.equal(res.statusCode, 401, `${r.method} ${r.url}`)
  }
})
