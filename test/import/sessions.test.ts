// Import sessions of compose files: analyze answers the pending session at once; the work goes on in the
// background and the stream carries metadata, progress, log lines and then complete (or failed), in order,
// each payload in its documented shape; the session records the same. A finished session's stream sends its
// terminal event and ends. Bad requests are 400 (413 too large) before anything is recorded, and sessions
// expire (TTL index, and a check on read).
import t from 'tap'
import { Value } from 'typebox/value'
import { importFixture, WEB_AND_DB } from './fixture.ts'
import { openStream } from '../streams/sse-client.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { ImportCompleteEvent, ImportFailedEvent, ImportLogEvent, ImportProgressEvent, ImportSessionSchema } from '../../schemas/import.ts'
import { MAX_COMPOSE_BYTES } from '../../schemas/import-analysis.ts'

// Defaults: plain http Git URLs are refused (ALLOW_INSECURE_CLUSTERS is off).
const f = await importFixture(t, { BODY_LIMIT_BYTES: 4 * 1024 * 1024 })
const { owner, call } = f

const SCHEMAS: Record<string, object> = { metadata: ImportSessionSchema, progress: ImportProgressEvent, log: ImportLogEvent, complete: ImportCompleteEvent, failed: ImportFailedEvent }

t.test('a compose analysis: 201 pending, then progress, log and complete on the stream, in order; the session agrees', async (t) => {
  const started = await f.analyze(owner, { source: 'compose', content: WEB_AND_DB })
  t.equal(started.status, 201, JSON.stringify(started.body))
  t.match(started.body, { source: 'compose', status: 'pending', progress: 0, error: null, url: null })
  t.notOk('analysis' in started.body)
  t.ok(Value.Check(ImportSessionSchema, started.body), 'the reply is a session')
  const expires = Date.parse(started.body.expires_at) - Date.parse(started.body.created_at)
  t.equal(expires, 3600 * 1000, 'kept for IMPORT_SESSION_TTL_S')

  const stream = await f.follow(owner, started.body.id)
  const types = stream.events.map((e) => e.type)
  t.equal(types[0], 'metadata', 'metadata first')
  t.equal(types.at(-1), 'complete', 'complete last, then the stream ends')
  const body = types.slice(1)
  t.same(body.filter((x) => x === 'progress').length, 1)
  t.equal(body[0], 'progress', 'progress before any log line')
  t.ok(body.slice(1, -1).every((x) => x === 'log'), `then log lines (${body.join(', ')})`)
  t.same(stream.events[1].data, { status: 'analyzing', progress: 50, message: 'analyzing the compose file' })
  for (const e of stream.events) t.ok(Value.Check(SCHEMAS[e.type] as never, e.data), `${e.type} has its documented shape`)
  const ids = stream.events.slice(1).map((e) => e.id!)
  t.same(ids, [...ids].sort((a, b) => a - b), 'ids increase')

  const session = (await call(owner, 'GET', `/v1/api/import/${started.body.id}`)).body
  t.match(session, { status: 'completed', progress: 100, error: null, message: 'analysis complete' })
  t.ok(session.finished_at)
  t.ok(Value.Check(ImportSessionSchema, session), 'GET answers a session in its documented shape')
  t.same(stream.events.at(-1)!.data.analysis, session.analysis, 'the complete event carries the stored analysis')
  const stored = await f.app.db.collection('import_sessions').findOne({ _id: started.body.id as never })
  t.equal(typeof stored!.analysis_json, 'string', 'the analysis is stored as its JSON text, one field')
  t.equal(stored!.analysis, null, 'not as a deep document')
  t.same(JSON.parse(stored!.analysis_json), session.analysis)
  t.same(session.analysis.services.map((s: { name: string }) => s.name).sort(), ['db', 'web'])
  t.ok(session.logs.some((l: string) => /found 2 services/.test(l)), 'the log is recorded')
  t.same(session.logs.map((l: string) => l.replace(/^\S+ /, '')), stream.events.filter((e) => e.type === 'log').map((e) => e.data.line.replace(/^\S+ /, '')), 'the stored log is the streamed one')
})

t.test('a finished session\'s stream: metadata, its terminal event, and the end', async (t) => {
  const started = await f.analyze(owner, { source: 'compose', content: WEB_AND_DB })
  await f.follow(owner, started.body.id)
  const again = await openStream(f.base, `/v1/api/import/${started.body.id}/stream`, owner.headers)
  await again.ended
  t.same(again.events.map((e) => e.type), ['metadata', 'complete'])
  t.equal(again.events[0].data.status, 'completed')
  t.ok(again.events[1].id! > again.events[0].id!, 'the terminal event comes after the snapshot')
  t.same(again.events[1].data.analysis, again.events[0].data.analysis)
})

t.test('a session stored before analyses were kept as text (a deep `analysis` document) reads the same everywhere', async (t) => {
  const analysis = { services: [], nodes: [{ id: 'web', type: 'deployment', position: { x: 0, y: 0 }, data: { name: 'web', namespace: 'default', image: 'nginx:1.27', replicas: 1, port: 80 } }], edges: [], warnings: [], errors: [] }
  const id = await f.seedSession(owner, analysis)
  const session = (await call(owner, 'GET', `/v1/api/import/${id}`)).body
  t.ok(Value.Check(ImportSessionSchema, session), 'GET answers a session in its documented shape')
  t.same(session.analysis, analysis)
  const stream = await openStream(f.base, `/v1/api/import/${id}/stream`, owner.headers)
  await stream.ended
  t.same(stream.events.map((e) => e.type), ['metadata', 'complete'])
  for (const e of stream.events) t.ok(Value.Check(SCHEMAS[e.type] as never, e.data), `${e.type} has its documented shape`)
  t.same(stream.events[0].data.analysis, analysis)
  t.same(stream.events[1].data, { analysis })
  const made = await call(owner, 'POST', '/v1/api/import/create-workflow', { import_id: id, name: 'from an old session' })
  t.equal(made.status, 201, JSON.stringify(made.body))
  t.same(made.body.nodes.map((n: { id: string }) => n.id), ['web'])
})

t.test('a compose file that cannot be analysed: the session fails with the reason; the stream ends on failed', async (t) => {
  const started = await f.analyze(owner, { source: 'compose', content: 'services:\n  web:\n    image: [not, a, string]\n' })
  t.equal(started.status, 201)
  const stream = await f.follow(owner, started.body.id)
  t.equal(stream.events.at(-1)!.type, 'failed')
  const session = (await call(owner, 'GET', `/v1/api/import/${started.body.id}`)).body
  t.match(session, { status: 'failed', analysis: undefined })
  t.ok(session.error && session.error.length > 0)
  t.equal(stream.events.at(-1)!.data.error, session.error)
  t.ok(session.logs.at(-1).endsWith(`failed: ${session.error}`))
  const replay = await openStream(f.base, `/v1/api/import/${started.body.id}/stream`, owner.headers)
  await replay.ended
  t.same(replay.events.map((e) => [e.type, e.type === 'metadata' ? e.data.status : e.data.error]), [['metadata', 'failed'], ['failed', session.error]])
})

t.test('bad requests: 400 naming the field, nothing recorded', async (t) => {
  const before = await f.app.db.collection('import_sessions').countDocuments({})
  const cases: Array<[object, RegExp]> = [
    [{ source: 'compose' }, /body\/content is required for source "compose"/],
    [{ source: 'compose', content: '   ' }, /body\/content is required/],
    [{ source: 'git' }, /body\/url is required for source "git"/],
    [{ source: 'compose', content: 'services: {}', url: 'https://example.com/r.git' }, /body\/url is for source "git"/],
    [{ source: 'git', url: 'https://example.com/r.git', content: 'services: {}' }, /body\/content is for source "compose"/],
    [{ source: 'git', url: 'https://example.com/r.git', username: 'me' }, /body\/username goes with body\/token/],
    [{ source: 'svn', url: 'https://example.com/r' }, /source/],
    [{ source: 'compose', content: 'services: {}', extra: 1 }, /extra/],
    [{ source: 'git', url: 'https://example.com/r.git', path: '../etc' }, /path/],
    [{ source: 'git', url: 'http://127.0.0.1:1/r.git' }, /^url must use https$/],
    [{ source: 'git', url: 'https://169.254.169.254/latest/meta-data' }, /address 169\.254\.169\.254 is not allowed/],
    [{ source: 'git', url: 'https://user:secret@example.com/r.git' }, /must not carry credentials/],
    [{ source: 'git', url: 'not a url' }, /url must be an absolute URL/],
    [{ source: 'compose', content: 'services: {}', profiles: ['bad profile'] }, /profiles/],
  ]
  for (const [body, message] of cases) {
    const res = await f.analyze(owner, body)
    t.equal(res.status, 400, JSON.stringify(body))
    t.match(res.body.error, message)
    t.same(Object.keys(res.body), ['error'])
  }
  t.equal(await f.app.db.collection('import_sessions').countDocuments({}), before)
})

t.test('a compose file over the size limit: 413', async (t) => {
  const big = `services: {}\n# ${'x'.repeat(MAX_COMPOSE_BYTES)}\n`
  const res = await f.analyze(owner, { source: 'compose', content: big })
  t.equal(res.status, 413)
  t.same(Object.keys(res.body), ['error'])
  const multibyte = `services: {}\n# ${'é'.repeat(MAX_COMPOSE_BYTES / 2)}\n`
  const res2 = await f.analyze(owner, { source: 'compose', content: multibyte })
  t.equal(res2.status, 413, 'counted in bytes, not characters')
})

t.test('sessions expire: a TTL index on expires_at, a check on read, and the sweep removes them', async (t) => {
  const indexes = await f.app.db.collection('import_sessions').indexes()
  t.ok(indexes.some((i) => i.key.expires_at === 1 && i.expireAfterSeconds === 0), 'TTL index on expires_at')
  const started = await f.analyze(owner, { source: 'compose', content: WEB_AND_DB })
  await f.follow(owner, started.body.id)
  await f.app.db.collection('import_sessions').updateOne({ _id: started.body.id }, { $set: { expires_at: new Date(Date.now() - 1000) } })
  const res = await call(owner, 'GET', `/v1/api/import/${started.body.id}`)
  t.same([res.status, res.body], [404, { error: 'import session not found' }], 'expired, even before the sweep')
  const wf = await call(owner, 'POST', '/v1/api/workflows', { name: 'late' })
  t.equal((await call(owner, 'POST', '/v1/api/import/apply', { import_id: started.body.id, workflow_id: wf.body.id, mode: 'merge' })).status, 404, 'an expired session cannot be applied')
  if (process.env.MONGODB_URI) return // a real MongoDB sweeps once a minute
  await waitFor('the TTL sweep to remove the session', async () => (await f.app.db.collection('import_sessions').countDocuments({ _id: started.body.id })) === 0, 10_000, 50)
  t.pass('removed by the TTL sweep')
})
