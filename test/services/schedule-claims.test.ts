// Scheduled jobs across replicas sharing a database (issue 25 item 3): each cron slot is claimed by exactly one
// replica, a crashed holder's claim runs out so a later slot runs, and the statistics repair (real node-cron,
// every second) runs once per slot across two services, where without claims both would run it.
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { ScheduleClaims } from '../../src/replicas/schedule-claims.ts'
import { StatsService } from '../../src/services/stats-service.ts'
import { StatsRepository } from '../../src/repositories/stats.ts'
import { EventBus } from '../../src/events/bus.ts'

t.test('twenty claimers racing for one slot: exactly one wins; the next slot is free once the winner settles', async (t) => {
  const { db } = await startTestDatabase(t)
  const replicas = Array.from({ length: 20 }, (_, i) => new ScheduleClaims(db, `replica-${i}`))
  const slot = new Date('2026-11-27T20:00:00.000Z')
  // The first slot of a job creates its document: the racers meet at the upsert's duplicate key.
  const first = await Promise.all(replicas.map((r) => r.claim('job', slot, 60_000)))
  t.equal(first.filter(Boolean).length, 1, 'one winner for a new job')
  const winner = first.indexOf(true)
  t.match(await db.collection('schedule_claims').findOne({}), { _id: 'job', tick: slot, holder: `replica-${winner}` }, 'the claim names the slot and its winner')

  t.same(await Promise.all(replicas.map((r) => r.claim('job', slot, 60_000))), replicas.map(() => false), 'a slot already claimed is never claimed again, not even by its holder')

  const next = new Date(slot.getTime() + 60_000)
  t.same((await Promise.all(replicas.map((r) => r.claim('job', next, 60_000)))).filter(Boolean).length, 0, 'the next slot waits while the holder still runs the last one')
  await replicas[(winner + 1) % 20].settle('job', slot)
  t.equal((await Promise.all(replicas.map((r) => r.claim('job', next, 60_000)))).filter(Boolean).length, 0, 'only the holder can settle its slot')
  await replicas[winner].settle('job', slot)
  // Existing document now: the racers meet at the conditional update.
  const second = await Promise.all(replicas.map((r) => r.claim('job', next, 60_000)))
  t.equal(second.filter(Boolean).length, 1, 'one winner for the next slot')
  t.equal(await replicas[0].claim('other-job', next, 60_000), true, 'jobs are claimed independently')
})

t.test('a crashed holder never settles: its claim runs out and a later slot runs elsewhere', async (t) => {
  const { db } = await startTestDatabase(t)
  let now = new Date('2026-11-27T20:00:00.000Z')
  const clock = () => now
  const crashed = new ScheduleClaims(db, 'crashed', clock)
  const survivor = new ScheduleClaims(db, 'survivor', clock)
  const slot1 = new Date(now)
  t.equal(await crashed.claim('job', slot1, 9_000), true)
  // The holder dies here, before onComplete.
  now = new Date(slot1.getTime() + 5_000)
  t.equal(await survivor.claim('job', new Date(slot1.getTime() + 5_000), 9_000), false, 'a slot while the dead holder\'s claim is still current is skipped')
  now = new Date(slot1.getTime() + 10_000)
  t.equal(await survivor.claim('job', new Date(slot1.getTime() + 10_000), 9_000), true, 'the next slot after the claim ran out runs')
  t.equal(await crashed.claim('job', slot1, 9_000), false, 'an old slot is never run again, even when free')
})

t.test('node-cron\'s slot key is what the coordinator expects; an unexpected key fails closed', async (t) => {
  const { db } = await startTestDatabase(t)
  const coordinator = new ScheduleClaims(db, 'r1').coordinatorFor('dashboard-stats', () => 1000)
  t.equal(await coordinator.shouldRun('dashboard-stats:2026-11-27T20:00:00.000Z', 30_000), true)
  t.equal(await coordinator.shouldRun('dashboard-stats:2026-11-27T20:00:00.000Z', 30_000), false)
  await t.rejects(async () => coordinator.shouldRun('other:2026-11-27T20:00:00.000Z', 30_000), /unexpected slot key/)
  await t.rejects(async () => coordinator.shouldRun('dashboard-stats:not a date', 30_000), /unexpected slot key/)
})

interface Teardown { teardown(fn: () => unknown): void }

/** The real repository, recording the second at which each repair started (one `owners()` per repair). */
class CountingStats extends StatsRepository {
  constructor(db: ConstructorParameters<typeof StatsRepository>[0], private readonly seen: number[], private readonly onRepair: () => void) { super(db) }
  override async owners(): Promise<string[]> {
    this.seen.push(Math.floor(Date.now() / 1000))
    this.onRepair()
    return super.owners()
  }
}

async function repairsOverSlots(t: Teardown, shared: boolean, slots: number): Promise<number[]> {
  const { db } = await startTestDatabase(t)
  await db.collection('workflows').insertOne({ owner_id: 'u1', name: 'w' })
  const seen: number[] = []
  let reached!: () => void
  const enough = new Promise<void>((resolve) => { reached = resolve })
  const onRepair = () => { if (new Set(seen).size >= slots) reached() }
  const services = ['r1', 'r2'].map((id) => new StatsService(new CountingStats(db, seen, onRepair), new EventBus()))
  // The cron timers are unref'ed: the test holds the process open while it waits for them.
  const keepAlive = setInterval(() => undefined, 1000)
  t.teardown(() => clearInterval(keepAlive))
  services.forEach((s, i) => s.start('* * * * * *', shared ? new ScheduleClaims(db, `r${i + 1}`) : undefined))
  await enough
  await Promise.all(services.map((s) => s.stop()))
  return seen
}

t.test('the statistics repair runs once per slot across two replicas that claim; twice without', async (t) => {
  const shared = await repairsOverSlots(t, true, 3)
  // Stopped once the third slot started; a slot's repairs all start within milliseconds of its second.
  t.equal(shared.length, new Set(shared).size, `one repair per slot with claims (${shared.length} repairs over ${new Set(shared).size} slots)`)
  const single = await repairsOverSlots(t, false, 2)
  t.ok(single.length > new Set(single).size, `without claims each replica repairs at every slot (${single.length} repairs over ${new Set(single).size} slots)`)
})
