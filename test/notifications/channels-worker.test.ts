// The delivery worker's own timing on the real repository: a retry timer that fires before the clock the
// claim compares with reaches the record's next_at (timers and Date.now are different clocks) waits the
// rest instead of losing the wake-up until the next poll (the poll is an hour away here).
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { NotificationDeliveryRepository } from '../../src/repositories/notification-deliveries.ts'
import { DeliveryWorker } from '../../src/services/notifications/channels/delivery-worker.ts'

const database = await startTestDatabase(t)
const repo = new NotificationDeliveryRepository(database.db, 86_400_000)

t.test('a wake-up that fires early by the claim\'s clock still delivers at next_at', async (t) => {
  let skew = 0
  const now = () => Date.now() + skew
  let attempted!: (id: string) => void
  const attemptedP = new Promise<string>((resolve) => { attempted = resolve })
  const worker = new DeliveryWorker({
    deliveries: repo, claimMs: 5000, pollMs: 3_600_000, concurrency: 2, log: { error: () => undefined }, now,
    attempt: async (claimed) => {
      await repo.record(claimed, { attempt: { at: new Date(now()), status_code: 200, error: null, duration_ms: 1, redirects: 0 }, status: 'delivered', next_at: null })
      attempted(claimed.doc._id)
    },
  })
  t.teardown(() => worker.close())
  const dueAt = Date.now() + 100
  const [doc] = await repo.enqueue([{
    owner_id: 'o', channel_id: 'c', type: 'run_failed', test: false,
    notification: { id: 'n', type: 'run_failed', title: 't', message: 'm', link: '/l', created_at: new Date().toISOString() },
  }], new Date(dueAt))
  worker.start()
  worker.wakeAt(dueAt)
  // From now on the claim's clock reads 40 ms behind the timers: the wake-up fires "early".
  skew = -40
  let bound: NodeJS.Timeout | undefined
  const outcome = await Promise.race([attemptedP, new Promise<string>((resolve) => { bound = setTimeout(() => resolve('lost'), 3000) })])
  clearTimeout(bound)
  t.equal(outcome, doc._id, 'delivered, not left for the next poll')
  t.ok(now() >= dueAt, 'and not before it was due by the claim\'s clock')
  await worker.idle()
  t.match(await repo.get('o', doc._id), { status: 'delivered' })
})
