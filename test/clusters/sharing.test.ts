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
  shareCluster: { body: { email: 'x@example.com', role: 'admin' } }, unshareCluster: {},
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
      const res = await call(stranger, method.toUpperCase() as 'GET', path.replace('{name}', 'prod').replace('{user_id}', stranger.user.id), req.body)
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
  t.same(shared.body.shared_with, [{ user_id: viewer.user.id, email: viewer.user.email, name: viewer.user.name, role: 'viewer' }], 'the share names the user by email and name')
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
  t.equal((await call(owner, 'GET', '/v1/api/clusters/prod')).body.is_default, true, 'defaults are per user: the owner\'s (their first cluster) stays theirs')
})

t.test('an admin share may update and share; only the owner deletes', async (t) => {
  t.equal((await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: admin.user.email, role: 'admin' })).status, 200)
  t.equal((await call(admin, 'PUT', '/v1/api/clusters/prod', { description: 'by admin' })).body.description, 'by admin')
  t.equal((await call(admin, 'PUT', '/v1/api/clusters/prod/credentials', cred)).status, 200)
  t.equal((await call(admin, 'DELETE', '/v1/api/clusters/prod')).status, 403)
  const re = await call(admin, 'POST', '/v1/api/clusters/prod/share', { email: viewer.user.email, role: 'deployer' })
  t.same(re.body.shared_with.find((s: { user_id: string }) => s.user_id === viewer.user.id), { user_id: viewer.user.id, email: viewer.user.email, name: viewer.user.name, role: 'deployer' }, 'a new role replaces the old')
  const listed = (await call(owner, 'GET', '/v1/api/clusters')).body.clusters[0].shared_with
  t.same(listed.map((s: { email: string; role: string }) => [s.email, s.role]).sort(), [[admin.user.email, 'admin'], [viewer.user.email, 'deployer']].sort(), 'lists show emails too')
  t.equal((await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: 'nobody@example.com', role: 'viewer' })).status, 404)
  t.equal((await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: owner.user.email, role: 'viewer' })).status, 400)
})

t.test('sharing refuses a name the other user already reaches', async (t) => {
  t.equal((await call(stranger, 'POST', '/v1/api/clusters', { name: 'prod', server: sim.url, auth_type: 'token', credentials: cred })).status, 201, 'names are per owner')
  const res = await call(owner, 'POST', '/v1/api/clusters/prod/share', { email: stranger.user.email, role: 'viewer' })
  t.equal(res.status, 409)
})

t.test('an own cluster cannot take the name of one shared with the user; every cluster stays reachable by id', async (t) => {
  const res = await call(viewer, 'POST', '/v1/api/clusters', { name: 'prod', server: sim.url, auth_type: 'token', credentials: cred })
  t.equal(res.status, 409)
  t.match(res.body.error, /"prod" is already shared with you/)
  const seen = await call(viewer, 'GET', '/v1/api/clusters/prod')
  t.equal(seen.body.owner_id, owner.user.id, 'the name still reaches the shared cluster')
  t.equal((await call(viewer, 'GET', `/v1/api/clusters/${seen.body.id}`)).body.name, 'prod', 'and so does its id')
  t.equal((await call(viewer, 'GET', `/v1/api/clusters/${seen.body.id}/status`)).body.name, 'prod', 'on every :name path')
  // A clash stored before names were checked: the own cluster keeps the name, the shared one its id.
  const legacy = (await app.db.collection('clusters').findOne({ name: 'prod', owner_id: owner.user.id }))!
  await app.db.collection('clusters').insertOne({ ...legacy, _id: 'abcdefabcdefabcdefabcdef' as never, owner_id: viewer.user.id, shared_with: [], default_of: [] })
  t.equal((await call(viewer, 'GET', '/v1/api/clusters/prod')).body.id, 'abcdefabcdefabcdefabcdef', 'by name: the own one')
  t.equal((await call(viewer, 'GET', `/v1/api/clusters/${seen.body.id}`)).body.owner_id, owner.user.id, 'by id: the shared one')
  await app.db.collection('clusters').deleteOne({ _id: 'abcdefabcdefabcdefabcdef' as never })
  t.equal((await call(stranger, 'GET', `/v1/api/clusters/${seen.body.id}`)).status, 404, 'an id reaches nothing that is not shared with the caller')
})

t.test('revoking a share: owner or shared admin, 204, then the user no longer reaches it', async (t) => {
  const cluster = (await call(owner, 'GET', '/v1/api/clusters/prod')).body
  t.equal((await call(viewer, 'PUT', '/v1/api/clusters/prod/default')).status, 200)
  let res = await call(viewer, 'DELETE', `/v1/api/clusters/prod/share/${admin.user.id}`)
  t.equal(res.status, 403, 'a deployer may not revoke')
  res = await call(admin, 'DELETE', `/v1/api/clusters/prod/share/${viewer.user.id}`)
  t.equal(res.status, 204, 'a shared admin may')
  t.equal(res.body, undefined)
  t.equal((await call(viewer, 'GET', '/v1/api/clusters/prod')).status, 404, 'the user no longer reaches it by name')
  t.equal((await call(viewer, 'GET', `/v1/api/clusters/${cluster.id}`)).status, 404, 'nor by id')
  t.equal((await call(viewer, 'GET', '/v1/api/clusters/default')).status, 404, 'nor as their default')
  t.equal((await call(viewer, 'GET', '/v1/api/clusters')).body.total, 0)
  res = await call(owner, 'DELETE', `/v1/api/clusters/prod/share/${viewer.user.id}`)
  t.equal(res.status, 404, 'no such share any more')
  t.equal(res.body.error, 'share not found')
  t.equal((await call(owner, 'DELETE', '/v1/api/clusters/prod/share/not-a-user')).status, 404)
  t.equal((await call(owner, 'DELETE', `/v1/api/clusters/prod/share/${owner.user.id}`)).status, 404, 'the owner holds no share')
  t.equal((await call(owner, 'DELETE', `/v1/api/clusters/prod/share/${admin.user.id}`)).status, 204, 'the owner may')
  t.same((await call(owner, 'GET', '/v1/api/clusters/prod')).body.shared_with, [])
  const log = (await call(owner, 'GET', '/v1/api/clusters/prod/logs?limit=50')).body.logs
  t.equal(log.filter((l: { message: string }) => l.message === 'share revoked').length, 2, 'each revocation is logged')
})

t.test('the owner deletes; then it is gone for everyone', async (t) => {
  t.equal((await call(owner, 'DELETE', '/v1/api/clusters/prod')).status, 204)
  t.equal((await call(viewer, 'GET', '/v1/api/clusters/prod')).status, 404)
  t.equal((await call(owner, 'GET', '/v1/api/clusters/prod/logs')).status, 404)
})
