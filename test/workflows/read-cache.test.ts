import t, { type Test } from 'tap'
import type { Db } from 'mongodb'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import { registerUser } from '../helpers/auth.ts'
import { WorkflowRepository } from '../../src/repositories/workflows.ts'
import { VersionRepository } from '../../src/repositories/versions.ts'
import { RunRepository } from '../../src/repositories/runs.ts'
import { WorkflowService } from '../../src/services/workflow-service.ts'

// MONGODB_URI unset: the app runs its own embedded server, the one setting where the read cache is on.
const app = await buildApp(testConfig({ CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *' }))
t.teardown(() => app.close())
await app.ready()
const alice = await registerUser(app)
const bob = await registerUser(app)
const workflowsColl = app.db.collection('workflows')

const http = (user: { headers: { authorization: string } }) => async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => {
  const res = await app.inject({ method, url: `/v1/api/workflows${url}`, headers: user.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const asAlice = http(alice)
const asBob = http(bob)
const node = (id: string, image: string) => ({ id, type: 'deployment', position: { x: 0, y: 0 }, data: { name: id, image, replicas: 1 } })

/** The operations every write path is checked through: over HTTP (the app's cached repository) or a service. */
interface Ops {
  create(name: string): Promise<{ id: string }>
  get(id: string): Promise<Record<string, any> | null>
  save(id: string, image: string): Promise<void>
  update(id: string, name: string): Promise<void>
  status(id: string, status: 'draft' | 'published' | 'archived'): Promise<void>
  createVersion(id: string): Promise<void>
  restore(id: string, version: number): Promise<void>
  clone(id: string, name: string): Promise<{ id: string }>
  remove(id: string): Promise<void>
}

const httpOps: Ops = {
  create: async (name) => (await asAlice('POST', '', { name })).body,
  get: async (id) => { const r = await asAlice('GET', `/${id}`); return r.status === 200 ? r.body : null },
  save: async (id, image) => { await asAlice('POST', `/${id}/save`, { nodes: [node('web', image)], edges: [] }) },
  update: async (id, name) => { await asAlice('PUT', `/${id}`, { name }) },
  status: async (id, status) => { await asAlice('PUT', `/${id}/status`, { status }) },
  createVersion: async (id) => { await asAlice('POST', `/${id}/versions`) },
  restore: async (id, version) => { await asAlice('POST', `/${id}/versions/${version}/restore`) },
  clone: async (id, name) => (await asAlice('POST', `/${id}/clone`, { name })).body,
  remove: async (id) => { await asAlice('DELETE', `/${id}`) },
}

function serviceOps(repo: WorkflowRepository): Ops {
  const service = new WorkflowService({
    workflows: repo, versions: new VersionRepository(app.db), runs: new RunRepository(app.db), bus: app.bus,
    canDeployTo: async () => true, pluginsByRef: async () => [],
  })
  const owner = alice.user.id
  return {
    create: (name) => service.create(owner, { name }),
    get: (id) => service.get(owner, id).catch(() => null),
    save: async (id, image) => { await service.save(owner, id, { nodes: [node('web', image)], edges: [] }) },
    update: async (id, name) => { await service.update(owner, id, { name }) },
    status: async (id, status) => { await service.setStatus(owner, id, status) },
    createVersion: async (id) => { await service.createVersion(owner, id, {}) },
    restore: async (id, version) => { await service.restoreVersion(owner, id, version) },
    clone: (id, name) => service.clone(owner, id, name),
    remove: (id) => service.delete(owner, id),
  }
}

async function noStaleReadAfterAnyWrite(t: Test, ops: Ops) {
  const { id } = await ops.create('original')
  // Each write follows a read, so a cache holds the workflow as it was just before the write.
  await ops.get(id)
  await ops.save(id, 'nginx:1')
  t.equal((await ops.get(id))?.nodes[0].data.image, 'nginx:1', 'save')
  await ops.update(id, 'renamed')
  t.equal((await ops.get(id))?.name, 'renamed', 'update')
  await ops.status(id, 'published')
  t.equal((await ops.get(id))?.status, 'published', 'status')
  await ops.createVersion(id)
  t.equal((await ops.get(id))?.current_version, 1, 'a new version (allocates its number on the workflow)')
  await ops.save(id, 'nginx:2')
  t.equal((await ops.get(id))?.nodes[0].data.image, 'nginx:2', 'a second save')
  await ops.restore(id, 1)
  const restored = await ops.get(id)
  t.equal(restored?.nodes[0].data.image, 'nginx:1', 'restore brings the graph back')
  t.equal(restored?.current_version, 2, 'restore records a version')
  const copy = await ops.clone(id, 'copy')
  t.equal((await ops.get(copy.id))?.name, 'copy', 'clone')
  t.equal((await ops.get(id))?.name, 'renamed', 'the source of a clone is unchanged')
  await ops.remove(id)
  t.equal(await ops.get(id), null, 'delete')
  t.equal((await ops.get(copy.id))?.name, 'copy', 'deleting the source leaves the clone')
}

t.test('no stale read after any write path, over HTTP with the app\'s cache', (t) => noStaleReadAfterAnyWrite(t, httpOps))
t.test('no stale read after any write path, through a cached repository', (t) => noStaleReadAfterAnyWrite(t, serviceOps(new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 10 } }))))
t.test('no stale read after any write path, through an uncached repository', (t) => noStaleReadAfterAnyWrite(t, serviceOps(new WorkflowRepository(app.db))))

t.test('with the embedded database the app serves reads by id from its cache', async (t) => {
  const { id } = await httpOps.create('cached')
  await httpOps.get(id)
  // A write behind the repository's back (which nothing in the app does) is how the cache shows itself.
  await workflowsColl.updateOne({ _id: id as never }, { $set: { name: 'behind its back' } })
  t.equal((await httpOps.get(id))?.name, 'cached')
})

t.test('another user\'s id is 404 even while cached, and their writes do not reach it', async (t) => {
  const { id } = await httpOps.create('alice only')
  t.equal((await asAlice('GET', `/${id}`)).status, 200)
  t.equal((await asBob('GET', `/${id}`)).status, 404)
  t.equal((await asBob('PUT', `/${id}`, { name: 'bob was here' })).status, 404)
  t.equal((await asBob('POST', `/${id}/save`, { nodes: [], edges: [] })).status, 404)
  t.equal((await asBob('DELETE', `/${id}`)).status, 404)
  t.equal((await asBob('GET', `/${id}`)).status, 404, 'still 404 after bob\'s attempts')
  t.equal((await asAlice('GET', `/${id}`)).body.name, 'alice only')
})

t.test('a caller mutating a result does not change what the next read returns', async (t) => {
  const repo = new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 10 } })
  const { id } = await httpOps.create('pristine')
  await httpOps.save(id, 'nginx:1')
  const first = (await repo.get(alice.user.id, id))!
  first.name = 'mutated'
  first.nodes[0].data = { image: 'mutated' }
  const second = (await repo.get(alice.user.id, id))!
  t.equal(second.name, 'pristine', 'the value read from the database was stored as a copy')
  second.nodes.push(node('extra', 'x'))
  const third = (await repo.get(alice.user.id, id))!
  t.same([third.name, third.nodes.length, third.nodes[0]?.data?.image], ['pristine', 1, 'nginx:1'], 'a hit returns a copy')
})

t.test('the cache keeps at most maxEntries, dropping the least recently used', async (t) => {
  const repo = new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 2 } })
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => httpOps.create(`lru ${n}`)))
  for (const { id } of [a, b, a, c]) await repo.get(alice.user.id, id) // b is now the least recently used
  await workflowsColl.updateMany({ _id: { $in: [a.id, b.id, c.id] as never[] } }, { $set: { name: 'changed behind' } })
  const names = await Promise.all([a, b, c].map(async ({ id }) => (await repo.get(alice.user.id, id))!.name))
  t.same(names, ['lru a', 'changed behind', 'lru c'], 'a and c served from the cache, b evicted and read again')
})

t.test('a read that started before a write does not store what it read', async (t) => {
  // The repository's collection, with findOne held after the database has answered.
  let hold: { answered: () => void; release: Promise<void> } | null = null
  const db = {
    collection: (name: string) => {
      const c = app.db.collection(name)
      return new Proxy(c, {
        get: (target, key) => key !== 'findOne' ? Reflect.get(target, key) : async (...args: unknown[]) => {
          const doc = await (target.findOne as (...a: unknown[]) => Promise<unknown>)(...args)
          const h = hold
          if (h) { hold = null; h.answered(); await h.release }
          return doc
        },
      })
    },
  } as unknown as Db
  const repo = new WorkflowRepository(db, undefined, { cache: { maxEntries: 10 } })
  const { id } = await httpOps.create('before')

  let answered!: () => void
  let release!: () => void
  const readAnswered = new Promise<void>((r) => { answered = r })
  hold = { answered, release: new Promise<void>((r) => { release = r }) }
  const slowRead = repo.get(alice.user.id, id)
  await readAnswered // the slow read holds the old document
  const written = await repo.update(alice.user.id, id, { name: 'after' })
  t.equal(written?.name, 'after')
  release()
  t.equal((await slowRead)?.name, 'before', 'the slow read answers what it read (it overlapped the write)')
  t.equal((await repo.get(alice.user.id, id))?.name, 'after', 'but did not cache it: the next read sees the write')
})
