// Which mode a process runs in (API.md §11): a plain `npm start` (no MONGODB_URI: the embedded database
// inside the process, which no other process can reach) is a single replica with everything in memory, as
// before replicas existed; MONGODB_URI makes it a shared replica unless REPLICA_MODE says otherwise.
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import { replicaIdentity } from '../../src/replicas/identity.ts'
import { MemoryStreamHub } from '../../src/events/stream-hub.ts'
import { DatabaseStreamHub } from '../../src/events/db-stream-hub.ts'
import { SingleOwnership, LeasedOwnership } from '../../src/kube/cluster-ownership.ts'
import { startTestDatabase } from '../helpers/database.ts'

t.test('REPLICA_MODE: auto is shared exactly when MONGODB_URI is set; single and shared are taken as said', async (t) => {
  t.equal(replicaIdentity('auto', false).shared, false)
  t.equal(replicaIdentity('auto', true).shared, true)
  t.equal(replicaIdentity('single', true).shared, false)
  t.equal(replicaIdentity('shared', true).shared, true)
  const a = replicaIdentity('auto', true)
  const b = replicaIdentity('auto', true)
  t.match(a.id, new RegExp(`^[A-Za-z0-9.-]+-${process.pid}-[0-9a-f]{8}$`), 'host, pid and a random part')
  t.not(a.id, b.id, 'a new id on every start')
})

t.test('without MONGODB_URI the app is a single replica: memory hub, owns every cluster, nothing written for replicas', async (t) => {
  const app = await buildApp(testConfig({ LOG_LEVEL: 'silent', CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *' }))
  t.teardown(() => app.close())
  await app.ready()
  t.equal(app.replica.shared, false)
  t.ok(app.streams instanceof MemoryStreamHub, 'streams stay in memory')
  t.ok(app.services.resourceWatch.ownership instanceof SingleOwnership, 'this process watches every cluster')
  t.ok(app.services.resourceWatch.ownership.owns('any-cluster'))
  t.equal(app.services.resourceWatch.ownership.epoch('any-cluster'), null, 'status writes are not fenced')
  app.streams.publish('workflow:x', 'ping', {})
  // The collections exist (their indexes are made at start-up); nothing is written to them.
  t.equal(await app.db.collection('leases').countDocuments(), 0, 'no lease is written')
  t.equal(await app.db.collection('replicas').countDocuments(), 0, 'no replica registers')
  t.equal(await app.db.collection('events').countDocuments(), 0, 'no event is written')
})

t.test('with MONGODB_URI (REPLICA_MODE auto) the app is a shared replica: database hub and leases', async (t) => {
  const db = await startTestDatabase(t)
  const app = await buildApp(testConfig({
    LOG_LEVEL: 'silent', MONGODB_URI: db.uri, MONGODB_DB: db.dbName, CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *',
  }))
  t.teardown(() => app.close())
  await app.ready()
  t.equal(app.replica.shared, true)
  t.ok(app.streams instanceof DatabaseStreamHub, 'streams go through the events collection')
  t.ok(app.services.resourceWatch.ownership instanceof LeasedOwnership, 'clusters are leased')
})
