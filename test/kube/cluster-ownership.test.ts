// Cluster leases among replicas (API.md §11 "Watch ownership"), several LeasedOwnership instances on one
// embedded database: one holder per cluster, a fair spread, takeover within one TTL from a replica that
// stopped renewing, at the next round from one that handed its leases back, epochs that grow with every
// change of holder, and never two holders however many replicas race.
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { LeaseRepository } from '../../src/replicas/leases.ts'
import { LeasedOwnership, SingleOwnership } from '../../src/kube/cluster-ownership.ts'

const TTL = 600
const database = await startTestDatabase(t)
const repo = new LeaseRepository(database.db)
const { leaseIndexes } = await import('../../src/replicas/leases.ts')
await leaseIndexes(database.db)

let prefix = 0
/** A fresh set of cluster ids per test, so tests do not see each other's leases. */
function clustersOf(n: number): string[] {
  prefix++
  return Array.from({ length: n }, (_, i) => `c${prefix}-${i}`)
}

function replica(id: string, clusters: string[], ttlMs = TTL): LeasedOwnership {
  return new LeasedOwnership({ leases: repo, replicaId: id, ttlMs, clusterIds: async () => clusters })
}

/** Resolves when `pred` holds, checked at every gained/lost event of the replicas; bounded. */
function until(replicas: LeasedOwnership[], pred: () => boolean, what: string, ms = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const offs: Array<() => void> = []
    const done = (err?: Error) => { clearTimeout(timer); for (const off of offs) off(); if (err) reject(err); else resolve() }
    const check = () => { if (pred()) done() }
    const timer = setTimeout(() => done(new Error(`timed out waiting for ${what}`)), ms)
    for (const r of replicas) offs.push(r.onGained(check), r.onLost(check))
    check()
  })
}

const holders = (replicas: LeasedOwnership[], cluster: string) => replicas.filter((r) => r.owns(cluster))
const everyClusterHeldOnce = (replicas: LeasedOwnership[], clusters: string[]) => clusters.every((c) => holders(replicas, c).length === 1)

/** Fails the test if a replica gains a cluster another replica still counts as its own. */
function neverTwo(t: { fail(msg: string): void; teardown(fn: () => unknown): void }, replicas: LeasedOwnership[]): void {
  for (const r of replicas) {
    const off = r.onGained((c) => {
      const others = replicas.filter((x) => x !== r && x.owns(c))
      if (others.length) t.fail(`cluster ${c} gained while another replica holds it`)
    })
    t.teardown(off)
  }
}

t.test('one replica alone holds every cluster; a second one takes half (4 clusters, 2 replicas: 2 each)', async (t) => {
  const clusters = clustersOf(4)
  const a = replica('a1', clusters)
  const b = replica('b1', clusters)
  t.teardown(async () => { await a.release(); await b.release() })
  neverTwo(t, [a, b])
  await a.start()
  t.same(a.ownedClusters(), clusters, 'alone: all four')
  for (const c of clusters) t.type(a.epoch(c), 'number')
  const started = Date.now()
  await b.start()
  await until([a, b], () => a.ownedClusters().length === 2 && b.ownedClusters().length === 2, 'a 2/2 spread')
  t.ok(everyClusterHeldOnce([a, b], clusters), 'every cluster has exactly one holder')
  t.same([...a.ownedClusters(), ...b.ownedClusters()].sort(), clusters)
  // The first holder hands back its extras at its next round, the newcomer takes them at its own: two renewal periods.
  t.ok(Date.now() - started < 2 * TTL, `spread within two renewal periods and their rounds (${Date.now() - started} ms)`)
  const docs = await database.db.collection('leases').find({ _id: { $in: clusters } as never }).toArray()
  for (const d of docs) t.ok((d.holder === 'a1' && a.owns(String(d._id))) || (d.holder === 'b1' && b.owns(String(d._id))), 'the database names the holder that counts it as its own')
})

t.test('three replicas on 4 clusters: at most ceil(4/3) = 2 each, every cluster once', async (t) => {
  const clusters = clustersOf(4)
  const rs = ['x', 'y', 'z'].map((id) => replica(`${id}2`, clusters))
  t.teardown(async () => { for (const r of rs) await r.release() })
  neverTwo(t, rs)
  for (const r of rs) await r.start()
  await until(rs, () => everyClusterHeldOnce(rs, clusters) && rs.every((r) => r.ownedClusters().length <= 2), 'a spread over three')
  t.equal(rs.reduce((n, r) => n + r.ownedClusters().length, 0), 4)
})

t.test('a replica that stops renewing loses its clusters to the other within one TTL; epochs grow', async (t) => {
  const clusters = clustersOf(4)
  // Long enough that a round's database trips on a loaded machine stay well under a renewal period (TTL/3).
  const ttl = 1500
  const a = replica('a3', clusters, ttl)
  const b = replica('b3', clusters, ttl)
  t.teardown(async () => { await a.release(); await b.release() })
  neverTwo(t, [a, b])
  await a.start()
  await b.start()
  await until([a, b], () => a.ownedClusters().length === 2 && b.ownedClusters().length === 2, 'a 2/2 spread', ttl * 3)
  const fromA = a.ownedClusters()
  const before = new Map(clusters.map((c) => [c, (a.epoch(c) ?? b.epoch(c))!]))
  const stopped = Date.now()
  await a.stop()
  t.same(a.ownedClusters(), [], 'a stopped replica counts nothing as its own')
  await until([b], () => b.ownedClusters().length === 4, 'b holding all four', ttl * 3)
  const took = Date.now() - stopped
  t.comment(`takeover after stop() with TTL ${ttl} ms: ${took} ms`)
  // The last renewal was at most a third of a TTL before stop(); the bound is one TTL after it, plus one
  // round (waiting for b's next renewal period instead would take up to TTL/3 = 500 ms more).
  t.ok(took <= ttl + 250, `taken over within one TTL of the last renewal (${took} ms after stop())`)
  for (const c of fromA) t.equal(b.epoch(c), before.get(c)! + 1, 'a change of holder: epoch + 1')
  for (const c of clusters.filter((c) => !fromA.includes(c))) t.equal(b.epoch(c), before.get(c), 'kept by its holder: same epoch')
})

t.test('release() hands every lease back: told so (leases.released, relayed), the other replica takes them at once', async (t) => {
  const clusters = clustersOf(4)
  const ttl = 6000
  const b = replica('b4', clusters, ttl)
  // What the services plugin wires through the bus and the replica relay: the other replica's round runs now.
  const a = new LeasedOwnership({ leases: repo, replicaId: 'a4', ttlMs: ttl, clusterIds: async () => clusters, onReleased: () => b.poke() })
  t.teardown(async () => { await a.release(); await b.release() })
  neverTwo(t, [a, b])
  await a.start()
  await b.start()
  // a hands back its extras, b takes them, without waiting for their renewals.
  await a.poke()
  await b.poke()
  await until([a, b], () => a.ownedClusters().length === 2 && b.ownedClusters().length === 2, 'a 2/2 spread', ttl)
  const fromA = a.ownedClusters()
  const epochs = new Map(fromA.map((c) => [c, a.epoch(c)!]))
  const released = Date.now()
  await a.release()
  const docs = await database.db.collection('leases').find({ _id: { $in: fromA } as never }).toArray()
  t.ok(docs.every((d) => d.holder === null), 'released in the database at once')
  t.equal(await database.db.collection('replicas').countDocuments({ _id: 'a4' } as never), 0, 'unregistered')
  await until([b], () => b.ownedClusters().length === 4, 'b holding all four', ttl)
  const took = Date.now() - released
  t.comment(`takeover after release() with TTL ${ttl} ms: ${took} ms`)
  // Without the poke b would wait for its next renewal, up to TTL/3 = 2000 ms.
  t.ok(took < 600, `at once (${took} ms), not at b's next renewal`)
  for (const c of fromA) t.equal(b.epoch(c), epochs.get(c)! + 1, 'epoch + 1 on the new holder')
  // And back again: a third holder, a third epoch.
  const c = fromA[0]
  const a2 = replica('a4bis', clusters, ttl)
  t.teardown(() => a2.release())
  await b.release()
  await a2.start()
  t.equal(a2.epoch(c), epochs.get(c)! + 2, 'every change of holder adds one')
})

t.test('racing replicas never give a cluster to two: acquire is atomic, and 8 replicas settle to one holder each', async (t) => {
  const [race] = clustersOf(1)
  const now = new Date()
  const until_ = new Date(now.getTime() + TTL)
  const wins = await Promise.all(Array.from({ length: 12 }, (_, i) => repo.acquire(race, `r${i}`, now, until_)))
  t.equal(wins.filter(Boolean).length, 1, 'one of 12 concurrent acquisitions of a new lease wins')
  const later = new Date(now.getTime() + TTL + 1)
  const again = await Promise.all(Array.from({ length: 12 }, (_, i) => repo.acquire(race, `s${i}`, later, new Date(later.getTime() + TTL))))
  t.equal(again.filter(Boolean).length, 1, 'one of 12 concurrent takeovers of an expired lease wins')
  t.equal(again.find(Boolean)!.epoch, 2)

  const clusters = clustersOf(6)
  const rs = Array.from({ length: 8 }, (_, i) => replica(`race${i}`, clusters))
  t.teardown(async () => { for (const r of rs) await r.release() })
  neverTwo(t, rs)
  await Promise.all(rs.map((r) => r.start()))
  for (const c of clusters) t.ok(holders(rs, c).length <= 1, `${c}: never two holders`)
  await until(rs, () => everyClusterHeldOnce(rs, clusters) && rs.every((r) => r.ownedClusters().length <= 1), 'one cluster each at most', TTL * 5)
  const docs = await database.db.collection('leases').find({ _id: { $in: clusters } as never }).toArray()
  t.equal(new Set(docs.map((d) => d.holder)).size, 6, 'six different holders in the database')
})

t.test('a lease whose local expiry passed is not counted as owned, even before any round notices', async (t) => {
  let clock = 1_000_000
  const clusters = clustersOf(1)
  const r = new LeasedOwnership({ leases: repo, replicaId: 'clocked', ttlMs: 60_000, clusterIds: async () => clusters, now: () => clock })
  t.teardown(() => r.release())
  const lost = new Promise<string>((resolve) => r.onLost(resolve))
  await r.start()
  t.ok(r.owns(clusters[0]))
  t.type(r.epoch(clusters[0]), 'number')
  clock += 60_000
  t.notOk(r.owns(clusters[0]), 'expired locally: not owned')
  t.equal(r.epoch(clusters[0]), null, 'and no epoch to write with')
  const gainedAgain = new Promise<string>((resolve) => r.onGained(resolve))
  r.poke()
  t.equal(await lost, clusters[0], 'announced as lost at the next round')
  t.equal(await gainedAgain, clusters[0], 'and gained again: nobody took it meanwhile')
  t.equal(r.epoch(clusters[0]), 1, 'same holder, same epoch')
})

t.test('a single replica owns every cluster, unfenced', async (t) => {
  const s = new SingleOwnership()
  await s.start()
  t.ok(s.owns('anything'))
  t.equal(s.epoch('anything'), null)
  t.equal(s.ownedClusters(), null)
  await s.release()
})
