// The audit recorder on a real database: entries leave the caller at once, go out in batches (one
// insertMany at a time), a full queue drops its oldest with one warning, a failed batch is logged by its
// size and error class only, closing writes what is queued within its bound, and entries expire by TTL.
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { AuditRepository, AUDIT_COLLECTION, auditIndexes, type AuditDoc } from '../../src/repositories/audit.ts'
import { MongoNetworkError } from 'mongodb'
import { AuditRecorder, type NewAuditEntry } from '../../src/services/lifecycle/audit/recorder.ts'

const { db } = await startTestDatabase(t)
const repo = new AuditRepository(db)
const audit = db.collection<AuditDoc>(AUDIT_COLLECTION)

const entry = (n: number, extra: Partial<NewAuditEntry> = {}): NewAuditEntry => ({
  actor_id: 'u1', actor_email: 'u1@example.test', action: 'workflow.run', target_type: 'workflow', target_id: `t${n}`, subject_id: null,
  outcome: 'ok', status: 200, ip: '127.0.0.1', request_id: `req-${n}`, ...extra,
})

function collectingLog() {
  const lines: Array<{ level: string; obj: object; msg: string }> = []
  return { lines, warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }), error: (obj: object, msg: string) => lines.push({ level: 'error', obj, msg }) }
}

/** The real repository, with each batch's size noted and, when gated, held until let go. */
function observedWriter() {
  const batches: number[] = []
  let gate: Promise<void> | null = null
  let open = () => {}
  return {
    batches,
    hold() { gate = new Promise((resolve) => { open = resolve }) },
    release() { open(); gate = null },
    async insertMany(docs: AuditDoc[]) { batches.push(docs.length); if (gate) await gate; await repo.insertMany(docs) },
  }
}

t.beforeEach(async () => { await audit.deleteMany({}) })

t.test('entries go out in batches of batchSize, in order, one write at a time', async (t) => {
  const writer = observedWriter()
  const recorder = new AuditRecorder(writer, collectingLog(), { batchSize: 500, flushDelayMs: 10_000 })
  for (let i = 0; i < 1200; i++) recorder.record(entry(i))
  await recorder.flush()
  t.same(writer.batches, [500, 500, 200])
  const docs = await audit.find({}).sort({ at: 1, _id: 1 }).toArray()
  t.equal(docs.length, 1200)
  t.same(docs.slice(0, 3).map((d) => d.target_id), ['t0', 't1', 't2'])
  t.equal(docs[1199].target_id, 't1199')
})

t.test('a few entries wait flushDelayMs for company, then go out together', async (t) => {
  const writer = observedWriter()
  const recorder = new AuditRecorder(writer, collectingLog(), { batchSize: 500, flushDelayMs: 30 })
  for (let i = 0; i < 3; i++) recorder.record(entry(i))
  t.same(writer.batches, [], 'nothing written while the request path runs')
  await waitFor('the delayed batch', () => writer.batches.length === 1)
  await recorder.flush()
  t.same(writer.batches, [3])
  t.equal(await audit.countDocuments(), 3)
})

t.test('record never waits for the database; a full queue drops the oldest, with one warning per interval', async (t) => {
  const writer = observedWriter()
  const log = collectingLog()
  const recorder = new AuditRecorder(writer, log, { maxQueued: 5, batchSize: 5, flushDelayMs: 10_000, warnIntervalMs: 60_000 })
  writer.hold()
  for (let i = 0; i < 5; i++) recorder.record(entry(i))
  await waitFor('the full batch at the (stalled) database', () => writer.batches.length === 1)
  t.same(writer.batches, [5], 'a full batch goes out without waiting for the delay')
  const started = performance.now()
  for (let i = 5; i < 13; i++) recorder.record(entry(i))
  t.ok(performance.now() - started < 50, 'recording while the database stalls returns at once')
  t.equal(recorder.queued, 5, 'the queue is bounded')
  t.same(log.lines.map((l) => [l.level, l.msg, l.obj]), [['warn', 'audit queue full: oldest entries dropped', { dropped: 1, max_queued: 5 }]], 'one warning for three drops')
  writer.release()
  await recorder.flush()
  const kept = (await audit.find({}).sort({ at: 1, _id: 1 }).toArray()).map((d) => d.target_id)
  t.same(kept, ['t0', 't1', 't2', 't3', 't4', 't8', 't9', 't10', 't11', 't12'], 'the three oldest queued were dropped')
})

t.test('a failed batch is logged by size and error class, never its entries; the next batch is written', async (t) => {
  const log = collectingLog()
  let fail = true
  const recorder = new AuditRecorder({
    async insertMany(docs) {
      if (fail) { fail = false; throw new Error(`E11000 duplicate key { target_id: "${docs[0].target_id}" } u1@example.test`) }
      await repo.insertMany(docs)
    },
  }, log, { flushDelayMs: 10_000 })
  recorder.record(entry(1, { target_id: 'secret-target-1' }))
  await recorder.flush()
  recorder.record(entry(2))
  await recorder.flush()
  t.same(log.lines.map((l) => [l.level, l.msg, l.obj]), [['error', 'audit entries could not be written', { entries: 1, error: 'Error' }]])
  t.notMatch(JSON.stringify(log.lines), /secret-target-1|u1@example|E11000/)
  t.same((await audit.find({}).toArray()).map((d) => d.target_id), ['t2'])
})

t.test('close writes what is queued within its bound, then refuses new entries', async (t) => {
  const writer = observedWriter()
  const recorder = new AuditRecorder(writer, collectingLog(), { flushDelayMs: 10_000 })
  recorder.record(entry(1))
  recorder.record(entry(2))
  await recorder.close(5000)
  t.equal(await audit.countDocuments(), 2)
  recorder.record(entry(3))
  await recorder.flush()
  t.equal(await audit.countDocuments(), 2, 'nothing is taken after close')

  const stuck = observedWriter()
  const log = collectingLog()
  const stalled = new AuditRecorder(stuck, log, { batchSize: 1, flushDelayMs: 10_000 })
  stuck.hold()
  stalled.record(entry(4))
  stalled.record(entry(5))
  const started = performance.now()
  await stalled.close(100)
  t.ok(performance.now() - started < 2000, 'a stalled database does not hold the shutdown past the bound')
  t.same(log.lines.map((l) => [l.msg, l.obj]), [['audit entries not written before shutdown', { lost: 1 }]])
  stuck.release()
})

t.test('a sign-in\'s email is resolved to its account by the writer, or dropped', async (t) => {
  const accounts: Record<string, { id: string; email: string }> = { 'known@example.test': { id: 'u9', email: 'known@example.test' } }
  const recorder = new AuditRecorder(repo, collectingLog(), {
    flushDelayMs: 10_000,
    resolveActor: async (email) => { if (email === 'boom@example.test') throw new Error('down'); return accounts[email] ?? null },
  })
  const anonymous = { actor_id: null, actor_email: null, action: 'auth.login', outcome: 'denied' as const, status: 401 }
  recorder.record(entry(1, anonymous), 'known@example.test')
  recorder.record(entry(2, anonymous), 'typo-password@example.test')
  recorder.record(entry(3, anonymous), 'boom@example.test')
  await recorder.flush()
  const docs = await audit.find({}).sort({ at: 1, _id: 1 }).toArray()
  t.same(docs.map((d) => [d.actor_id, d.actor_email]), [['u9', 'known@example.test'], [null, null], [null, null]])
  t.notMatch(JSON.stringify(docs), /typo-password|boom/)
})

t.test('an entry older than the retention is removed by the TTL index', async (t) => {
  await auditIndexes(db, 86_400)
  await repo.insertMany([
    { _id: 'old', at: new Date(Date.now() - 2 * 86_400_000), ...entry(1) },
    { _id: 'new', at: new Date(), ...entry(2) },
  ])
  await waitFor('the expired entry removed', async () => (await audit.countDocuments({ _id: 'old' })) === 0, 15_000)
  t.equal(await audit.countDocuments({ _id: 'new' }), 1)
})

/**
 * The real repository behind a switch: while `down`, a write fails as the driver's does when the database
 * is away; `partly` stores the batch's first entry before failing (the connection broke after the insert).
 * `back()` is the driver's heartbeat saying it answers again.
 */
function databaseThatGoesAway() {
  let down = false
  let partly = false
  const listeners = new Set<() => void>()
  const attempts: number[] = []
  return {
    attempts,
    goAway(options: { partly?: boolean } = {}) { down = true; partly = options.partly ?? false },
    back() { down = false; for (const l of listeners) l() },
    /** Back, with no heartbeat to say so. */
    backQuietly() { down = false },
    databaseBack: (listener: () => void) => { listeners.add(listener); return () => listeners.delete(listener) },
    async insertMany(docs: AuditDoc[]) {
      attempts.push(docs.length)
      if (down) {
        if (partly) { partly = false; await repo.insertMany(docs.slice(0, 1)) }
        throw new MongoNetworkError('connection closed')
      }
      await repo.insertMany(docs)
    },
  }
}

t.test('entries the database was away for are held and written once it answers again, none twice', async (t) => {
  const db = databaseThatGoesAway()
  const log = collectingLog()
  // A backoff longer than the test: only the heartbeat can bring the entries out.
  const recorder = new AuditRecorder(db, log, { flushDelayMs: 10_000, retryBaseMs: 600_000, databaseBack: db.databaseBack })
  db.goAway({ partly: true })
  for (let i = 0; i < 3; i++) recorder.record(entry(i))
  const flushed = recorder.flush()
  await waitFor('the first try', () => db.attempts.length === 1)
  t.ok(recorder.waitingForDatabase, 'held for the database')
  recorder.record(entry(3))
  t.equal(recorder.queued, 4, 'the failed batch is back in the queue with the entry that came after it')
  t.same(log.lines.map((l) => [l.level, l.msg, l.obj]), [['warn', 'the database is away: audit entries are held until it answers', { entries: 3, error: 'MongoNetworkError' }]], 'one warning, no entry in it')
  db.back()
  await flushed
  t.notOk(recorder.waitingForDatabase)
  const docs = await audit.find({}).sort({ at: 1, _id: 1 }).toArray()
  t.same(docs.map((d) => d.target_id), ['t0', 't1', 't2', 't3'], 'every entry, in order, the one stored by the broken try only once')
  t.notOk(log.lines.some((l) => l.level === 'error'), 'nothing given up on')
})

t.test('without a heartbeat the held entries go out at the next backoff', async (t) => {
  const db = databaseThatGoesAway()
  const recorder = new AuditRecorder(db, collectingLog(), { flushDelayMs: 10_000, retryBaseMs: 20, retryMaxMs: 40 })
  db.goAway()
  recorder.record(entry(1))
  const flushed = recorder.flush()
  await waitFor('three tries while away', () => db.attempts.length >= 3)
  db.backQuietly()
  await flushed
  t.equal(await audit.countDocuments({ target_id: 't1' }), 1)
})

t.test('held entries stay bounded during a long outage; the dropped count is logged', async (t) => {
  const db = databaseThatGoesAway()
  const log = collectingLog()
  const recorder = new AuditRecorder(db, log, { maxQueued: 5, batchSize: 5, flushDelayMs: 10_000, retryBaseMs: 600_000, warnIntervalMs: 60_000, databaseBack: db.databaseBack })
  db.goAway()
  for (let i = 0; i < 5; i++) recorder.record(entry(i))
  const flushed = recorder.flush()
  await waitFor('the first try', () => recorder.waitingForDatabase)
  for (let i = 5; i < 12; i++) recorder.record(entry(i))
  t.equal(recorder.queued, 5, 'never more than maxQueued')
  db.back()
  await flushed
  t.same((await audit.find({}).sort({ at: 1, _id: 1 }).toArray()).map((d) => d.target_id), ['t7', 't8', 't9', 't10', 't11'], 'the newest are kept')
  const drops = log.lines.filter((l) => l.msg === 'audit queue full: oldest entries dropped').map((l) => (l.obj as { dropped: number }).dropped)
  t.equal(drops.reduce((a, b) => a + b, 0), 7, `every drop is counted in the log (${JSON.stringify(drops)})`)
  t.ok(drops.length <= 2, 'in one warning when the queue fills, and one with the rest when writing works again')
})

t.test('close while the database is away gives up within its bound and says how many were lost', async (t) => {
  const db = databaseThatGoesAway()
  const log = collectingLog()
  const recorder = new AuditRecorder(db, log, { flushDelayMs: 10_000, retryBaseMs: 600_000, databaseBack: db.databaseBack })
  db.goAway()
  recorder.record(entry(1))
  recorder.record(entry(2))
  await recorder.close(100)
  t.same(log.lines.at(-1)?.obj, { lost: 2 })
  t.notOk(recorder.waitingForDatabase, 'no retry left behind')
})
