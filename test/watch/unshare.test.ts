// A revoked share ends the live status of what the user deployed there at once: the watchers that read
// the cluster with that user's access stop when the share goes, not at their next reconnect.
import t from 'tap'
import { watchFixture, deployment } from './fixture.ts'
import { registerUser } from '../helpers/auth.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

const f = await watchFixture(t)
t.setTimeout(120_000)
const NS = 'shared'

t.test('revoking a share stops the watchers of the user it was shared with', async (t) => {
  const dev = await registerUser(f.app)
  t.equal((await f.call(f.owner, 'POST', '/v1/api/clusters/sim/share', { email: dev.user.email, role: 'deployer' })).status, 200)
  const wf = await f.call(dev, 'POST', '/v1/api/workflows', { name: 'devs', cluster_id: 'sim' })
  t.equal(wf.status, 201)
  t.equal((await f.call(dev, 'POST', `/v1/api/workflows/${wf.body.id}/save`, { nodes: [deployment('n-web', 'web', NS, 'nginx:1.27', 1)], edges: [] })).status, 200)
  const finished = f.app.bus.next('run.finished', (e) => e.workflow_id === wf.body.id)
  const run = await f.call(dev, 'POST', `/v1/api/workflows/${wf.body.id}/run`, {})
  t.ok(run.status === 200 || run.status === 202, JSON.stringify(run.body))
  await finished
  await f.status('web running', (e) => e.owner_id === dev.user.id && e.name === 'web' && e.new_status === 'running')
  const watch = f.app.services.resourceWatch
  t.ok(watch.watchedCount() > 0, 'the user\'s resources are followed')

  const revoked = await f.call(f.owner, 'DELETE', `/v1/api/clusters/sim/share/${dev.user.id}`)
  t.equal(revoked.status, 204)
  await waitFor('the watchers to stop', () => watch.watchedCount() === 0 || null, 5_000, 10)
  t.equal(watch.watchedCount(), 0, 'nothing of theirs is followed any more')

  const before = f.statuses.length
  await f.kubectl('scale', 'deployment/web', '-n', NS, '--replicas=2')
  await waitFor('the scale to be done', async () => JSON.parse(await f.kubectl('get', 'deployment/web', '-n', NS, '-o', 'json')).status.readyReplicas === 2 || null, 15_000, 50)
  await watch.idle()
  t.equal(f.statuses.slice(before).filter((e) => e.owner_id === dev.user.id).length, 0, 'no status of theirs is published after the revocation')
})
