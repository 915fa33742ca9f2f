// The database hub: several DatabaseStreamHub instances on one real (embedded) database stand in for
// replicas. Cross-replica delivery in id order, Last-Event-ID resume on another replica, ids reserved and
// written late or never, pod-logs kept in the process, and publishing with the database gone.
import t from 'tap'
import { DatabaseStreamHub, type DatabaseHubOptions } from '../../src/events/db-stream-hub.ts'
import type { StreamEvent, Subscription } from '../../src/events/stream-hub.ts'
import { EventLog, eventLogIndexes, EVENTS_COLLECTION } from '../../src/replicas/event-log.ts'
import { startTestDatabase, type TestDatabase } from '../helpers/database.ts'

/** The next n events, or fewer if they do not come within `ms` (a bound so a missing event fails fast, not a wait). */
function take(sub: Subscription, n: number, ms = 5000): Promise<StreamEvent[]> {
  const it = sub[Symbol.asyncIterator]()
  const out: StreamEvent[] = []
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<StreamEvent[]>((resolve) => { timer = setTimeout(() => resolve([...out]), ms) })
  const all = (async () => {
    while (out.length < n) {
      const r = await it.next()
      if (r.done) break
      out.push(r.value)
    }
    return out
  })()
  return Promise.race([all, bound]).finally(() => clearTimeout(timer))
}

function captureLog() {
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = []
  return { lines, log: { warn: (obj: object, msg: string) => { lines.push({ obj: obj as Record<string, unknown>, msg }) } } }
}

async function hubs(t: { teardown(fn: () => unknown): void }, database: TestDatabase, n: number, opts: Partial<DatabaseHubOptions> = {}): Promise<DatabaseStreamHub[]> {
  const out: DatabaseStreamHub[] = []
  for (let i = 0; i < n; i++) {
    const hub = new DatabaseStreamHub({ db: database.db, origin: `replica-${i}`, pollMs: 20, ...opts })
    await hub.start()
    t.teardown(() => hub.shutdown(1000))
    out.push(hub)
  }
  return out
}

t.test('events published on any replica reach every replica, in the same id order', async (t) => {
  const database = await startTestDatabase(t)
  await eventLogIndexes(database.db)
  const [a, b, c] = await hubs(t, database, 3)
  const subs = [a, b, c].map((h) => h.subscribe('workflow:1'))
  const other = c.subscribe('workflow:2')
  a.publish('workflow:1', 'node_update', { n: 1 })
  a.publish('workflow:1', 'node_update', { n: 2 })
  b.publish('workflow:1', 'node_update', { n: 3 })
  c.publish('workflow:2', 'node_update', { n: 'other' })
  a.publish('workflow:1', 'complete', { n: 4 })
  const [ea, eb, ec] = await Promise.all(subs.map((s) => take(s, 4)))
  t.same(eb, ea, 'replica B delivered the same events with the same ids')
  t.same(ec, ea, 'replica C too')
  const ids = ea.map((e) => e.id)
  t.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]), `ids increase: ${ids}`)
  const fromA = ea.filter((e) => e.data && (e.data as { n: unknown }).n !== 3).map((e) => (e.data as { n: number }).n)
  t.same(fromA, [1, 2, 4], "one replica's events keep their publish order")
  t.same(ea.map((e) => e.type).sort(), ['complete', 'node_update', 'node_update', 'node_update'])
  const [o] = await take(other, 1)
  t.same(o.data, { n: 'other' }, 'other keys go to their own subscribers only')
  t.ok(subs.every((s) => s.since === 0), 'a fresh database starts at 0')
  const stored = await database.db.collection(EVENTS_COLLECTION).find({}).sort({ _id: 1 }).toArray()
  t.same(stored.map((d) => d._id), [...new Set([...ids, o.id])].sort((x, y) => x - y), 'the stream ids are the documents\' _ids')
  t.same(new Set(stored.map((d) => d.origin)), new Set(['replica-0', 'replica-1', 'replica-2']))
})

t.test('Last-Event-ID resumes on another replica: nothing missed, nothing twice', async (t) => {
  const database = await startTestDatabase(t)
  const [a, b, c] = await hubs(t, database, 3)
  const first = a.subscribe('workflow:r')
  // B has delivered all eight before the resume, so it replays from the collection (not the "ahead" case below).
  const probe = b.subscribe('workflow:r')
  for (let i = 1; i <= 5; i++) a.publish('workflow:r', 'node_update', { i })
  const seen = await take(first, 3)
  first.close()
  for (let i = 6; i <= 8; i++) c.publish('workflow:r', 'node_update', { i })
  t.equal((await take(probe, 8)).length, 8)
  probe.close()
  const resumed = b.subscribe('workflow:r', { lastEventId: seen[2].id })
  t.equal(resumed.since, seen[2].id)
  // Live events published while the replay query runs come after it, once.
  for (let i = 9; i <= 10; i++) a.publish('workflow:r', 'node_update', { i })
  const rest = await take(resumed, 7)
  t.same(rest.map((e) => (e.data as { i: number }).i), [4, 5, 6, 7, 8, 9, 10])
  const ids = rest.map((e) => e.id)
  t.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]) && ids[0] > seen[2].id, 'in id order, after the given id')
})

t.test('an id a lagging replica has not delivered yet: it waits for it instead of repeating events', async (t) => {
  const database = await startTestDatabase(t)
  const [a] = await hubs(t, database, 1)
  // B reads only when poked by its own insert: it stays behind A until then.
  const [b] = await hubs(t, database, 1, { pollMs: 60_000, origin: 'lagging' })
  const onA = a.subscribe('workflow:l')
  for (let i = 1; i <= 3; i++) a.publish('workflow:l', 'node_update', { i })
  const seen = await take(onA, 3)
  const resumed = b.subscribe('workflow:l', { lastEventId: seen[2].id })
  t.equal(resumed.since, seen[2].id)
  b.publish('workflow:l', 'node_update', { i: 4 })
  const [next] = await take(resumed, 1)
  t.same(next.data, { i: 4 }, 'the first event after the resume is the new one, not 1-3 again')
  t.ok(next.id > seen[2].id)
})

t.test('a Last-Event-ID this database never issued starts from now once the wait is over', async (t) => {
  const database = await startTestDatabase(t)
  const [a] = await hubs(t, database, 1, { gapWaitMs: 100 })
  const sub = a.subscribe('workflow:u', { lastEventId: 1_000_000 })
  a.publish('workflow:u', 'node_update', { i: 1 })
  await a.nextPoll()
  await a.nextPoll()
  // The wait for id 1,000,000 (gapWaitMs + pollMs) ends at a later poll; the held event then comes through.
  const [event] = await take(sub, 1)
  t.same(event.data, { i: 1 })
})

t.test('an id reserved by another replica and written late is delivered in order; one never written is skipped', async (t) => {
  const database = await startTestDatabase(t)
  const gapWaitMs = 300
  const [a, b] = await hubs(t, database, 2, { gapWaitMs })
  const log = new EventLog(database.db)
  const sub = b.subscribe('workflow:g')
  // The publisher delivers its own events without reading them back only when nothing before them is missing.
  const onPublisher = a.subscribe('workflow:g')

  // Late: id g is reserved (as another replica's batch would be) but written only after g+1 is visible.
  const g = await log.reserve(1)
  a.publish('workflow:g', 'node_update', { n: 'after-gap' })
  const heldBefore = b.stats.held
  while (b.stats.held === heldBefore) await b.nextPoll()
  await log.insert([{ _id: g, key: 'workflow:g', type: 'node_update', data: JSON.stringify({ n: 'late' }), at: new Date(), origin: 'elsewhere' }])
  const got = await take(sub, 2)
  t.same(got.map((e) => [e.id, (e.data as { n: string }).n]), [[g, 'late'], [g + 1, 'after-gap']], 'the late one first, as its id says')
  t.same(await take(onPublisher, 2), got, 'on the publishing replica too')
  t.equal(b.stats.skippedIds, 0)

  // Never written: g2 is skipped after the bounded wait, and the event after it is delivered.
  const g2 = await log.reserve(1)
  const publishedAt = Date.now()
  a.publish('workflow:g', 'node_update', { n: 'after-lost' })
  const [after] = await take(sub, 1)
  t.equal(after.id, g2 + 1)
  t.ok(Date.now() - publishedAt >= gapWaitMs, 'held for the wait first')
  t.equal(b.stats.skippedIds, 1)
  const [own] = await take(onPublisher, 1)
  t.same(own, after, 'the publishing replica delivers it too')
  t.equal(a.stats.skippedIds, 1, 'after skipping the same id')
})

t.test('pod-logs keys stay in the publishing process', async (t) => {
  const database = await startTestDatabase(t)
  const [a, b] = await hubs(t, database, 2)
  const key = 'pod-logs:c1/ns/pod/main?tail=10'
  const logs = a.subscribe(key)
  const remote = b.subscribe(key)
  const marker = b.subscribe('workflow:m')
  a.publish(key, 'log', { line: 'hello' })
  a.publish('workflow:m', 'node_update', {})
  const [line] = await take(logs, 1)
  t.same(line, { id: 1, type: 'log', data: { line: 'hello' } }, 'memory ids, as in one process')
  await take(marker, 1)
  t.equal(await database.db.collection(EVENTS_COLLECTION).countDocuments({ key }), 0, 'never written')
  t.equal(await database.db.collection(EVENTS_COLLECTION).countDocuments({}), 1)
  remote.close()
  t.equal(b.subscriberCount(key), 0)
})

t.test('publishing with the database gone neither throws nor blocks, keeps a bounded outbox and logs no payload', async (t) => {
  const database = await startTestDatabase()
  const { lines, log } = captureLog()
  const hub = new DatabaseStreamHub({ db: database.db, origin: 'r', pollMs: 20, outboxSize: 100, log })
  await hub.start()
  await database.close()
  const started = performance.now()
  for (let i = 0; i < 1000; i++) hub.publish('workflow:x', 'node_update', { secret: 'payload-s3cret', i })
  t.ok(performance.now() - started < 1000, 'publish returns at once')
  t.ok(hub.pending() <= 100, `outbox bounded (${hub.pending()})`)
  const sub = hub.subscribe('workflow:x')
  await hub.shutdown(300)
  t.ok(sub.closed)
  t.ok(lines.some((l) => /dropped/.test(l.msg)), 'the drops are logged')
  t.ok(lines.length <= 6, `rate-limited (${lines.length} lines)`)
  t.notMatch(JSON.stringify(lines), /s3cret/, 'no payload in the log')
  hub.publish('workflow:x', 'node_update', {})
  t.equal(hub.pending(), 0, 'after close, publishing is a no-op')
})

t.test('shutdown writes what is pending and delivers it here first, then ends subscriptions', async (t) => {
  const database = await startTestDatabase(t)
  const hub = new DatabaseStreamHub({ db: database.db, origin: 'r', pollMs: 20 })
  await hub.start()
  const sub = hub.subscribe('workflow:s')
  for (let i = 0; i < 50; i++) hub.publish('workflow:s', 'node_update', { i })
  await hub.shutdown(2000)
  const read: unknown[] = []
  for await (const event of sub) read.push((event.data as { i: number }).i)
  t.same(read, Array.from({ length: 50 }, (_, i) => i), 'every event reached the subscriber before its end (API.md §14)')
  t.ok(sub.closed)
  t.equal(await database.db.collection(EVENTS_COLLECTION).countDocuments({ key: 'workflow:s' }), 50, 'all written before shutdown resolved')
  t.ok(hub.subscribe('workflow:s').closed, 'later subscriptions start closed')
})

t.test('the TTL index follows EVENT_RETENTION_S, also when it changes', async (t) => {
  const database = await startTestDatabase(t)
  await eventLogIndexes(database.db, { eventRetentionS: 600 })
  await eventLogIndexes(database.db, { eventRetentionS: 120 })
  const indexes = await database.db.collection(EVENTS_COLLECTION).indexes()
  t.equal(indexes.find((i) => i.name === 'at_ttl')?.expireAfterSeconds, 120)
  t.same(indexes.find((i) => i.name === 'key_id')?.key, { key: 1, _id: 1 })
})
