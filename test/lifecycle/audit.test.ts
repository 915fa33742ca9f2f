// The audit log over HTTP: what a state-changing request leaves (one entry, once answered, with actor,
// action, target, outcome, status, ip and request id, and nothing of its body, query or headers), what
// a GET and a token refresh leave (nothing), sign-ins, share changes, the adapter's routes named as their
// canonical twins, the admin and own lists with their filters, and the retention index.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { AUDIT_COLLECTION, auditIndexes, type AuditDoc } from '../../src/repositories/audit.ts'
import { nameRoute } from '../../src/services/lifecycle/audit/actions.ts'

const RETENTION_DAYS = 7
const { app } = await startTestApp(t, { AUDIT_RETENTION_DAYS: RETENTION_DAYS })
const admin = await registerUser(app, { role: 'admin' })
const alice = await registerUser(app, { role: 'user' })
const bob = await registerUser(app, { role: 'user' })
const audit = app.db.collection<AuditDoc>(AUDIT_COLLECTION)

/** Every entry written since `since` (after the queue is flushed), oldest first. */
async function entriesSince(since: Date): Promise<AuditDoc[]> {
  await app.audit.recorder.flush()
  return audit.find({ at: { $gte: since } }).sort({ at: 1, _id: 1 }).toArray()
}

async function call(who: TestUser | null, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  const res = await app.inject({ method, url, ...(who && { headers: who.headers }), ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}

t.test('a state-changing request leaves one entry once answered; a GET leaves none', async (t) => {
  const since = new Date()
  const created = await call(alice, 'POST', '/v1/api/workflows', { name: 'audited', description: 'secret-in-body-9f2c' })
  t.equal(created.status, 201)
  await call(alice, 'GET', `/v1/api/workflows/${created.body.id}`)
  await call(alice, 'GET', '/v1/api/workflows?search=query-value-77ab')
  const renamed = await call(alice, 'PUT', `/v1/api/workflows/${created.body.id}?x=query-value-77ab`, { name: 'renamed' })
  t.equal(renamed.status, 200)
  const refused = await call(alice, 'PUT', `/v1/api/workflows/${created.body.id}`, { name: '' })
  t.equal(refused.status, 400)
  const entries = await entriesSince(since)
  t.same(entries.map((e) => [e.action, e.outcome, e.status]), [
    ['workflow.create', 'ok', 201], ['workflow.update', 'ok', 200], ['workflow.update', 'failed', 400],
  ])
  const [create, update] = entries
  t.match(create, { actor_id: alice.user.id, actor_email: alice.email, target_type: 'workflow', target_id: created.body.id, subject_id: null, ip: '127.0.0.1' })
  t.match(update, { target_id: created.body.id, request_id: /^req-/ })
  t.equal(new Set(entries.map((e) => e.request_id)).size, 3, 'one request id per entry')
  const text = JSON.stringify(entries)
  t.notMatch(text, /secret-in-body-9f2c|query-value-77ab|renamed|Bearer|authorization/i, 'no body, query value or header in any entry')
  t.notMatch(text, new RegExp(alice.token.split('.')[2]), 'no token')
})

t.test('outcomes: 401 and 404 are denied (anonymous has no actor), other errors failed', async (t) => {
  const since = new Date()
  t.equal((await call(null, 'POST', '/v1/api/workflows', { name: 'x' })).status, 401)
  const mine = await call(alice, 'POST', '/v1/api/workflows', { name: 'alice only' })
  t.equal((await call(bob, 'DELETE', `/v1/api/workflows/${mine.body.id}`)).status, 404)
  t.equal((await call(bob, 'POST', '/v1/api/admin/registries', { name: 'r', registry_type: 'dockerhub', username: 'u', password: 'registry-pw-5510' })).status, 403)
  t.equal((await call(bob, 'POST', '/v1/api/workflows', { name: '' })).status, 400)
  const entries = await entriesSince(since)
  t.same(entries.map((e) => [e.action, e.outcome, e.status, e.actor_id]), [
    ['workflow.create', 'denied', 401, null],
    ['workflow.create', 'ok', 201, alice.user.id],
    ['workflow.delete', 'denied', 404, bob.user.id],
    ['registry.create', 'denied', 403, bob.user.id],
    ['workflow.create', 'failed', 400, bob.user.id],
  ])
  t.equal(entries[2].target_id, mine.body.id, 'the attempt names the id it aimed at')
  t.notMatch(JSON.stringify(entries), /registry-pw-5510/)
})

t.test('sign-ins: the account when there is one, never the password; a token refresh is not recorded', async (t) => {
  const since = new Date()
  t.equal((await call(null, 'POST', '/v1/api/auth/login', { email: alice.email, password: alice.password })).status, 200)
  t.equal((await call(null, 'POST', '/v1/api/auth/login', { email: ` ${alice.email.toUpperCase()} `, password: 'wrong-password-1234' })).status, 401)
  t.equal((await call(null, 'POST', '/v1/api/auth/login', { email: 'nobody-31337@example.test', password: 'typed-password-5678' })).status, 401)
  t.equal((await call(alice, 'POST', '/v1/api/auth/refresh')).status, 200)
  const entries = await entriesSince(since)
  t.same(entries.map((e) => [e.action, e.outcome, e.status, e.actor_id, e.actor_email]), [
    ['auth.login', 'ok', 200, alice.user.id, alice.email],
    ['auth.login', 'denied', 401, alice.user.id, alice.email],
    ['auth.login', 'denied', 401, null, null],
  ])
  t.notMatch(JSON.stringify(entries), new RegExp(`${alice.password}|wrong-password-1234|typed-password-5678|nobody-31337`))
})

t.test('share changes: cluster.share and cluster.unshare with the cluster id and the grantee', async (t) => {
  const cluster = await call(alice, 'POST', '/v1/api/clusters', { name: 'audit-c', server: 'https://127.0.0.1:1', auth_type: 'token', token: 'cluster-token-0c0c' })
  t.equal(cluster.status, 201)
  const since = new Date()
  t.equal((await call(alice, 'POST', '/v1/api/clusters/audit-c/share', { email: bob.email, role: 'viewer' })).status, 200)
  t.equal((await call(alice, 'POST', '/v1/api/clusters/audit-c/share', { email: bob.email, role: 'deployer' })).status, 200, 'a role change')
  t.equal((await call(bob, 'DELETE', `/v1/api/clusters/audit-c/share/${bob.user.id}`)).status, 403, 'a viewer may not unshare')
  t.equal((await call(alice, 'DELETE', `/v1/api/clusters/audit-c/share/${bob.user.id}`)).status, 204)
  const entries = await entriesSince(since)
  t.same(entries.map((e) => [e.action, e.outcome, e.actor_id, e.target_type, e.target_id, e.subject_id]), [
    ['cluster.share', 'ok', alice.user.id, 'cluster', cluster.body.id, bob.user.id],
    ['cluster.share', 'ok', alice.user.id, 'cluster', cluster.body.id, bob.user.id],
    ['cluster.unshare', 'denied', bob.user.id, 'cluster', 'audit-c', bob.user.id],
    ['cluster.unshare', 'ok', alice.user.id, 'cluster', cluster.body.id, bob.user.id],
  ])
  t.notMatch(JSON.stringify(entries), /cluster-token-0c0c/, 'no credential')
  t.notMatch(JSON.stringify(entries.filter((e) => e.actor_id === alice.user.id)), new RegExp(bob.email), 'the grantee by id, never by email')
})

t.test('the KubeOrch adapter\'s routes are named as their canonical twins', async (t) => {
  const wf = await call(alice, 'POST', '/v1/api/workflows', { name: 'adapter' })
  const since = new Date()
  const res = await app.inject({ method: 'PUT', url: `/kubeorch/v1/api/workflows/${wf.body.id}/status`, headers: alice.headers, payload: { status: 'published' } })
  t.equal(res.statusCode, 200)
  await app.inject({ method: 'POST', url: `/kubeorch/v1/api/workflows/${wf.body.id}/clone`, headers: bob.headers, payload: {} })
  const entries = await entriesSince(since)
  t.same(entries.map((e) => [e.action, e.outcome, e.target_id]), [['workflow.set_status', 'ok', wf.body.id], ['workflow.clone', 'denied', wf.body.id]])
})

t.test('GET /v1/api/admin/audit: admins only, everyone\'s entries, filters, newest first', async (t) => {
  t.equal((await call(alice, 'GET', '/v1/api/admin/audit')).status, 403)
  t.equal((await call(null, 'GET', '/v1/api/admin/audit')).status, 401)
  await app.audit.recorder.flush()
  const all = await call(admin, 'GET', '/v1/api/admin/audit?limit=100')
  t.equal(all.status, 200)
  t.ok(all.body.total >= 15, `${all.body.total} entries`)
  t.same(Object.keys(all.body).sort(), ['entries', 'limit', 'page', 'total'])
  const times = all.body.entries.map((e: { at: string }) => e.at)
  t.same(times, [...times].sort().reverse(), 'newest first')
  t.ok(new Set(all.body.entries.map((e: { actor_id: string }) => e.actor_id)).size >= 3, 'several actors')

  const bobs = await call(admin, 'GET', `/v1/api/admin/audit?actor_id=${bob.user.id}&outcome=denied&limit=100`)
  t.ok(bobs.body.total >= 3)
  t.ok(bobs.body.entries.every((e: { actor_id: string; outcome: string }) => e.actor_id === bob.user.id && e.outcome === 'denied'))
  const shares = await call(admin, 'GET', '/v1/api/admin/audit?action=cluster.share')
  t.equal(shares.body.total, 2)
  const byTarget = await call(admin, 'GET', `/v1/api/admin/audit?target_id=${shares.body.entries[0].target_id}`)
  t.equal(byTarget.body.total, 4, 'its creation (the new id, from the reply), two shares and the owner\'s unshare')
  const paged = await call(admin, 'GET', '/v1/api/admin/audit?limit=2&page=2')
  t.equal(paged.body.entries.length, 2)
  t.same(paged.body.entries.map((e: { id: string }) => e.id), all.body.entries.slice(2, 4).map((e: { id: string }) => e.id))

  const future = new Date(Date.now() + 3_600_000).toISOString()
  t.equal((await call(admin, 'GET', `/v1/api/admin/audit?from=${future}`)).body.total, 0)
  const upToNow = await call(admin, 'GET', `/v1/api/admin/audit?to=${future}&from=2000-01-01T00:00:00Z`)
  t.equal(upToNow.body.total, all.body.total)
})

t.test('GET /v1/api/audit: only the caller\'s own entries, whatever the filter', async (t) => {
  const own = await call(bob, 'GET', '/v1/api/audit?limit=100')
  t.equal(own.status, 200)
  t.ok(own.body.total >= 4)
  t.ok(own.body.entries.every((e: { actor_id: string }) => e.actor_id === bob.user.id))
  t.equal((await call(bob, 'GET', `/v1/api/audit?actor_id=${alice.user.id}`)).status, 400, 'no actor filter here')
  const aliceShares = await call(bob, 'GET', '/v1/api/audit?action=cluster.share')
  t.equal(aliceShares.body.total, 0, 'alice\'s shares of her cluster with bob are not bob\'s entries')
  t.equal((await call(null, 'GET', '/v1/api/audit')).status, 401)
})

t.test('bad filters are 400 with the field named', async (t) => {
  for (const query of ['outcome=maybe', 'from=yesterday', 'to=2026-13-01T00:00:00Z', 'action=DROP%20TABLE', 'limit=101', 'page=0', 'sort=at', 'unknown=1',
    'from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z']) {
    const res = await call(admin, 'GET', `/v1/api/admin/audit?${query}`)
    t.equal(res.status, 400, query)
    t.type(res.body.error, 'string')
  }
  t.match((await call(admin, 'GET', '/v1/api/admin/audit?outcome=maybe')).body.error, /outcome/)
  t.match((await call(admin, 'GET', '/v1/api/admin/audit?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')).body.error, /from must not be after to/)
})

t.test('entries expire AUDIT_RETENTION_DAYS after their time: a TTL index on `at`, replaced when the setting changes', async (t) => {
  const ttl = async () => (await audit.indexes()).find((i) => i.name === 'at_ttl')
  t.match(await ttl(), { key: { at: 1 }, expireAfterSeconds: RETENTION_DAYS * 86_400 })
  const names = (await audit.indexes()).map((i) => i.name)
  for (const n of ['actor_at', 'action_at', 'target_at']) t.ok(names.includes(n), `${n} index`)
  await auditIndexes(app.db, 30 * 86_400)
  t.match(await ttl(), { expireAfterSeconds: 30 * 86_400 }, 'a new retention replaces the index')
  await auditIndexes(app.db, RETENTION_DAYS * 86_400)
})

t.test('every state-changing operation in the OpenAPI document gets its own well-formed action', async (t) => {
  const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { operationId?: string }>> }).paths
  const byAction = new Map<string, string>()
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (['get', 'head', 'options', 'parameters'].includes(method)) continue
      const action = nameRoute(method.toUpperCase(), path.replace(/\{(\w+)\}/g, ':$1'), op.operationId)?.action ?? ''
      t.match(action, /^[a-z]+\.[a-z0-9_]+$/, `${op.operationId} → ${action}`)
      t.notOk(byAction.has(action), `${action} names ${op.operationId} only${byAction.has(action) ? ` (also ${byAction.get(action)})` : ''}`)
      byAction.set(action, op.operationId ?? '')
    }
  }
  t.ok(byAction.size >= 40, `${byAction.size} actions`)
})
