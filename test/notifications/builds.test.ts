// Build notifications from real builds on the simulator (git server, registry): one that pushes its image
// notifies build_completed, one whose branch does not exist build_failed, each once, linking the build.
import t from 'tap'
import { buildFixture } from '../builds/fixture.ts'
import type { Notification } from '../../src/repositories/notifications.ts'

const f = await buildFixture(t)
t.setTimeout(90_000)
const { app, owner, call } = f

function notified(type: string, ms = 30_000): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    app.bus.next('notification.created', (e) => e.owner_id === owner.user.id && e.type === type).finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${type}`)), ms) }),
  ])
}

t.test('a build that pushes notifies build_completed; one that cannot clone notifies build_failed; each once', async (t) => {
  const completed = notified('build_completed')
  const good = await f.start()
  t.equal(good.status, 201, JSON.stringify(good.body))
  await completed
  const failed = notified('build_failed')
  const bad = await f.start({ branch: 'no-such-branch', image_tag: 'nobranch' })
  t.equal(bad.status, 201, JSON.stringify(bad.body))
  await failed
  await app.services.notifications.idle()
  const list: Notification[] = (await call(owner, 'GET', '/v1/api/notifications?limit=100')).body.notifications
  const builds = list.filter((n) => n.type.startsWith('build_'))
  t.same(builds.map((n) => [n.type, n.link]), [['build_failed', `/v1/api/builds/${bad.body.id}`], ['build_completed', `/v1/api/builds/${good.body.id}`]])
  t.match((await call(owner, 'GET', builds[1].link)).body, { id: good.body.id, status: 'completed' }, 'the link is the build')
})
