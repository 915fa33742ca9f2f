// Who may do what with a cluster: the owner anything; shared viewers, deployers and admins by their role;
// everyone else cannot tell it exists.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { startTestCluster } from '../helpers/kube.ts'

const sim = await startTestCluster(t)
const { app } = await startTestApp(t)
const owner = await registerUser(app)
const viewer = await registerUser(app)
const admin = await registerUser(app)
const stranger = await registerUser(app)
const as = (u: { token: string }) => ({ authorization: `Bearer ${u.token}` })
const call = async (u: { token: string }, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers: as(u), ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const cred = { token: sim.identities.admin.token, ca_data: sim.caPem }
t.equal((await call(owner, 'POST', '/v1/api/clusters', { name: 'prod', server: sim.url, auth_type: 'token', credentials: cred })).status, 201)

const requests: Record<string, { body?: object }> = {
  getCluster: {}, updateCluster: { body: { description: 'mine now' } }, deleteCluster: {}, setDefaultCluster: {}, testCluster: {},
  refreshCluster: {}, getClusterStatus: {}, getClusterMetrics: {}, listClusterLogs: {}, updateClusterCredentials: { body: cred },
  shareCluster: { body: { email: 'x@example.com', role: 'admin' } },
}

t.test('a user it is not shared with gets 404 on every cluster route, and nothing changes', async (t) => {
  // What a stranger's write could change (the health check may touch status and metadata meanwhile).
  const writable = async () => JSON.stringify(await app.db.collection('clusters').findOne({ name: 'prod' }, {
    projection: { _id: 0, name: 1, display_name: 1, description: 1, server: 1, auth_type: 1, labels: 1, shared_with: 1, default_of: 1, credentials_sealed: 1 },
  }))
  const before = await writable()
  const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { operationId: string }>> }).paths
  let checked = 0
  for (const [path, ops] of Object.entries(paths)) {
    if (!path.startsWith('/v1/api/clusters/{name}')) continue
    for (const [method, op] of Object.entries(ops)) {
      const req = requests[op.operationId]
      if (!t.ok(req, `${op.operationId} is in the table`)) continue
      const res = await call(stranger, method.toUpperCase() as 'GET', path.replace('{name}', 'prod'), req.body)
      t.equal(res.status, 404, `${method.toUpperCase()} ${path}`)
      checked++
    }
  }
  t.equal(checked, Object.keys(requests).length)
  t.equal((await call(stranger, 'GET', '/v1/api/clusters')).body.total, 0)
  t.equal((await call(stranger, 'GET', '/v1/api/search?q=prod')).body.clusters.length, 0)
  t.equal(await writable(), before)
})

t.test('a viewer sees and tests it but cannot change, re-credential, share or delete it', async (t) => {
  const shared = await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: viewer.user.email, role: 'viewer' })
  t.equal(shared.status, 200)
  t.same(shared.body.shared_with, [{ user_id: viewer.user.id, role: 'viewer' }])
  const seen = await call(viewer, 'GET', '/v1/api/clusters/prod')
  t.match(seen.body, { name: 'prod', access: 'viewer', shared_with: [] })
  t.equal((await call(viewer, 'POST', '/v1/api/clusters/prod/test')).status, 200)
  t.equal((await call(viewer, 'GET', '/v1/api/clusters')).body.total, 1)
  for (const [method, url, body] of [['PUT', '/v1/api/clusters/prod', { description: 'x' }], ['PUT', '/v1/api/clusters/prod/credentials', cred], ['POST', '/v1/api/clusters/prod/share', { email: stranger.user.email, role: 'viewer' }], ['DELETE', '/v1/api/clusters/prod', undefined]] as const) {
    const res = await call(viewer, method, url, body)
    t.equal(res.status, 403, `${method} ${url}`)
    t.match(res.body.error, /shared with you as viewer/)
  }
  t.equal((await call(viewer, 'PUT', '/v1/api/clusters/prod/default')).body.is_default, true, 'anyone may make it their own default')
  t.equal((await call(owner, 'GET', '/v1/api/clusters/prod')).body.is_default, false, 'defaults are per user')
})

t.test('an admin share may update and share; only the owner deletes', async (t) => {
  t.equal((await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: admin.user.email, role: 'admin' })).status, 200)
  t.equal((await call(admin, 'PUT', '/v1/api/clusters/prod', { description: 'by admin' })).body.description, 'by admin')
  t.equal((await call(admin, 'PUT', '/v1/api/clusters/prod/credentials', cred)).status, 200)
  t.equal((await call(admin, 'DELETE', '/v1/api/clusters/prod')).status, 403)
  const re = await call(admin, 'POST', '/v1/api/clusters/prod/share', { email: viewer.user.email, role: 'deployer' })
  t.same(re.body.shared_with.find((s: { user_id: string }) => s.user_id === viewer.user.id), { user_id: viewer.user.id, role: 'deployer' }, 'a new role replaces the old')
  t.equal((await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: 'nobody@example.com', role: 'viewer' })).status, 404)
  t.equal((await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: owner.user.email, role: 'viewer' })).status, 400)
})

t.test('sharing refuses a name the other user already reaches', async (t) => {
  t.equal((await call(stranger, 'POST', '/v1/api/clusters', { name: 'prod', server: sim.url, auth_type: 'token', credentials: cred })).status, 201, 'names are per owner')
  const res = await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: stranger.user.email, role: 'viewer' })
  t.equal(res.status, 409)
})

t.test('the owner deletes; then it is gone for everyone', async (t) => {
  t.equal((await call(owner, 'DELETE', '/v1/api/clusters/prod')).status, 204)
  t.equal((await call(viewer, 'GET', '/v1/api/clusters/prod')).status, 404)
  t.equal((await call(owner, 'GET', '/v1/api/clusters/prod/logs')).status, 404)
})
