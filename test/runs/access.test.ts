// Who may run what where: only the workflow's owner sees its runs (404 otherwise); a cluster shared as
// viewer cannot be deployed to (403), one shared as deployer can; nothing is recorded for a refused run.
import t from 'tap'
import { runFixture, shopGraph, TRIGGER } from './fixture.ts'
import { registerUser } from '../helpers/auth.ts'

const f = await runFixture(t)
const { owner, call, app } = f
const stranger = await registerUser(app)
const viewer = await registerUser(app)
const deployer = await registerUser(app)
// Set-up failures throw: top-level assertions between awaits would end tap's plan early.
const must = (ok: boolean, what: string) => { if (!ok) throw new Error(`set-up failed: ${what}`) }
must((await call(owner, 'POST', '/v1/api/clusters/sim/share', { email: viewer.user.email, role: 'viewer' })).status === 200, 'share as viewer')
must((await call(owner, 'POST', '/v1/api/clusters/sim/share', { email: deployer.user.email, role: 'deployer' })).status === 200, 'share as deployer')

const id = await f.workflow(shopGraph({ namespace: 'acl' }))
const ownRun = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })
must(ownRun.body.status === 'completed', 'the owner\'s run')
const runCount = () => app.db.collection('workflow_runs').countDocuments({})

const mine = async (user: typeof owner, name: string) => {
  const res = await call(user, 'POST', '/v1/api/workflows', { name })
  await call(user, 'POST', `/v1/api/workflows/${res.body.id}/save`, shopGraph({ namespace: `acl-${name}` }))
  return res.body.id as string
}

t.test('another user\'s workflow is not found on every run route, and nothing happens', async (t) => {
  const before = await runCount()
  t.equal((await call(stranger, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })).status, 404)
  t.equal((await call(stranger, 'POST', `/v1/api/workflows/${id}/run`, { dry_run: true, trigger_data: TRIGGER })).status, 404)
  t.equal((await call(stranger, 'GET', `/v1/api/workflows/${id}/runs/${ownRun.body.id}`)).status, 404)
  t.equal((await call(stranger, 'GET', `/v1/api/workflows/${id}/runs`)).status, 404)
  t.equal((await call(stranger, 'DELETE', `/v1/api/workflows/${id}?delete_resources=true`)).status, 404)
  // The stranger's own workflow id with the owner's run id: runs are scoped to the workflow and its owner.
  const theirs = await mine(stranger, 'theirs')
  t.equal((await call(stranger, 'GET', `/v1/api/workflows/${theirs}/runs/${ownRun.body.id}`)).status, 404)
  t.equal(await runCount(), before)
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${id}`)).status, 200, 'still there')
})

t.test('a user who cannot see the cluster gets 404 for it', async (t) => {
  const theirs = await mine(stranger, 'nosee')
  const res = await call(stranger, 'POST', `/v1/api/workflows/${theirs}/run`, { cluster: 'sim', trigger_data: TRIGGER })
  t.equal(res.status, 404)
})

t.test('a cluster shared as viewer cannot be deployed to (nor dry-run against): 403, nothing recorded', async (t) => {
  const before = await runCount()
  const theirs = await mine(viewer, 'viewer')
  for (const dry_run of [false, true]) {
    const res = await call(viewer, 'POST', `/v1/api/workflows/${theirs}/run`, { cluster: 'sim', dry_run, trigger_data: TRIGGER })
    t.equal(res.status, 403, `dry_run ${dry_run}`)
    t.match(res.body.error, /viewer/)
  }
  t.equal(await runCount(), before)
  t.equal((await call(viewer, 'GET', `/v1/api/workflows/${theirs}`)).body.current_version, 0, 'no version')
})

t.test('a cluster shared as deployer can be deployed to', async (t) => {
  const theirs = await mine(deployer, 'deployer')
  const res = await call(deployer, 'POST', `/v1/api/workflows/${theirs}/run`, { cluster: 'sim', trigger_data: TRIGGER })
  t.equal(res.status, 200)
  t.match(res.body, { status: 'completed', cluster: 'sim', triggered_by: deployer.user.id })
})

t.test('credentials that cannot be opened: 409, nothing recorded', async (t) => {
  const before = await runCount()
  await app.db.collection('clusters').updateOne({ name: 'sim' }, { $set: { credentials_sealed: 'v1.garbage' } })
  const res = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })
  t.equal(res.status, 409)
  t.match(res.body.error, /credentials/)
  t.equal(await runCount(), before)
})

t.test('every run route needs a token', async (t) => {
  t.equal((await app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/run`, payload: {} })).statusCode, 401)
  t.equal((await app.inject({ url: `/v1/api/workflows/${id}/runs/${ownRun.body.id}` })).statusCode, 401)
})
