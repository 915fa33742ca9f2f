// The limits of a build: the deadline (BUILD_TIMEOUT_MS → activeDeadlineSeconds) fails it, saying why; the
// kept log is capped (logs_truncated, the latest lines kept); a namespace that does not exist fails the build with the cluster's words.
import t from 'tap'
import { buildFixture } from './fixture.ts'

const f = await buildFixture(t, { BUILD_TIMEOUT_MS: 5000, BUILD_LOG_MAX_LINES: 12 })

t.test('the deadline: a build still running at BUILD_TIMEOUT_MS fails, saying why, and its Secret goes', async (t) => {
  const hold = f.sim.failingBuilds.hold('team/stuck', 'build')
  t.teardown(() => hold.release())
  const started = await f.start({ image_name: 'team/stuck' })
  t.equal(started.status, 201)
  await hold.reached
  const s = await f.stream(started.body.id)
  const events = await s.until('the end', (e) => e.some((x) => x.type === 'failed'), 20_000)
  const done = (await f.call(f.owner, 'GET', `/v1/api/builds/${started.body.id}`)).body
  t.equal(done.status, 'failed')
  t.equal(done.phase, 'build')
  t.match(done.error, /^the build ran longer than 5 s \(BUILD_TIMEOUT_MS\) and was stopped/)
  t.same(events.at(-1)!.data, { error: done.error, phase: 'build' })
  t.notOk(await f.exists('secret', `build-${started.body.id}`))
})

t.test('the kept log is capped: logs_truncated, the first and the latest lines kept, the push line among them', async (t) => {
  const started = await f.start({ image_name: 'team/chatty' })
  const done = await f.until(started.body.id, (b) => b.status === 'completed' || b.status === 'failed')
  t.equal(done.status, 'completed', done.error)
  t.equal(done.logs_truncated, true)
  const doc = await f.app.db.collection('builds').findOne({ _id: started.body.id })
  t.ok(doc!.logs.length <= 13, `${doc!.logs.length} lines kept`)
  t.ok(doc!.logs.some((l: { line: string }) => /log lines left out/.test(l.line)), 'the gap is marked')
  t.ok(doc!.logs.slice(-4).some((l: { line: string }) => /pushing manifest|DONE/.test(l.line)), 'the end is kept')
  const s = await f.stream(started.body.id)
  await s.ended
  t.equal(s.events.filter((e) => e.type === 'log').length, doc!.logs.length, 'the replay is what is kept')
})

t.test('a namespace that does not exist: failed with the cluster\'s words, nothing left', async (t) => {
  const started = await f.start({ namespace: 'no-such-ns', image_name: 'team/nowhere' })
  t.equal(started.status, 201)
  const done = await f.until(started.body.id, (b) => b.status === 'failed')
  t.match(done.error, /the cluster did not take the build Job: the cluster answered 404.*no-such-ns/)
  t.equal(done.phase, null)
})
