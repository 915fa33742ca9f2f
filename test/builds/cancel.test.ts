// Cancel during each phase (the simulator holds the build there, so no sleeps): the build becomes
// `cancelled` at once and stays so after its pod dies, the Job and its pods go, the Secret with them, the
// stream ends with `cancelled`; a second cancel is 409.
import t from 'tap'
import { buildFixture } from './fixture.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

const f = await buildFixture(t)

for (const phase of ['clone', 'build', 'push'] as const) {
  t.test(`cancel while ${phase === 'clone' ? 'cloning' : phase === 'build' ? 'building' : 'pushing'}`, async (t) => {
    const image = `team/cancel-${phase}`
    const hold = f.sim.failingBuilds.hold(image, phase)
    t.teardown(() => hold.release())
    const started = await f.start({ image_name: image })
    t.equal(started.status, 201)
    const id = started.body.id
    await hold.reached
    const expected = { clone: 'cloning', build: 'building', push: 'pushing' }[phase]
    // The pod is held in the phase; the service says so once it has seen it.
    if (phase !== 'push') await f.until(id, (b) => b.status === expected, `status ${expected}`)
    const stream = await f.stream(id)
    const cancelled = await f.call(f.owner, 'POST', `/v1/api/builds/${id}/cancel`)
    t.equal(cancelled.status, 200, JSON.stringify(cancelled.body))
    t.equal(cancelled.body.status, 'cancelled')
    t.ok(cancelled.body.finished_at)
    await stream.until('cancelled', (events) => events.some((e) => e.type === 'cancelled'))
    await stream.ended
    t.equal(stream.events.at(-1)!.type, 'cancelled', 'the stream ends with cancelled')
    await waitFor('the Job and its pod to be gone', async () => !(await f.exists('job', `build-${id}`)) && (await f.kubectlJson('-n', 'builds', 'get', 'pods', '-l', `orchestrator.build-id=${id}`)).items.length === 0, 15_000, 50)
    t.notOk(await f.exists('secret', `build-${id}`), 'the credentials Secret is gone')
    // Whatever the dying pod reported, the build stays cancelled.
    hold.release()
    await f.app.services.builds.finished(id)
    const after = (await f.call(f.owner, 'GET', `/v1/api/builds/${id}`)).body
    t.equal(after.status, 'cancelled')
    t.equal(after.image_digest, null)
    t.equal((await f.call(f.owner, 'POST', `/v1/api/builds/${id}/cancel`)).status, 409, 'cancelling twice → 409')
    const replay = await f.stream(id)
    await replay.ended
    t.same(replay.events.at(-1), { ...replay.events.at(-1), type: 'cancelled', data: {} }, 'a finished stream replays the cancel and ends')
  })
}

t.test('cancel before the Job exists: nothing is left in the cluster', async (t) => {
  // The cluster answers slowly: the cancel lands while the Job is being created.
  f.sim.faults.setLatency(150)
  t.teardown(() => f.sim.faults.reset())
  const started = await f.start({ image_name: 'team/early' })
  const cancelled = await f.call(f.owner, 'POST', `/v1/api/builds/${started.body.id}/cancel`)
  t.equal(cancelled.status, 200)
  await f.app.services.builds.finished(started.body.id)
  f.sim.faults.reset()
  await waitFor('no Job', async () => !(await f.exists('job', `build-${started.body.id}`)), 15_000, 50)
  t.notOk(await f.exists('secret', `build-${started.body.id}`))
  t.equal((await f.call(f.owner, 'GET', `/v1/api/builds/${started.body.id}`)).body.status, 'cancelled')
})
