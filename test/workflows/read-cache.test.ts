import t, { type Test } from 'tap'
import type { Db } from 'mongodb'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import { registerUser } from '../helpers/auth.ts'
import { WorkflowRepository } from '../../src/repositories/workflows.ts'
import { VersionRepository } from '../../src/repositories/versions.ts'
import { RunRepository } from '../../src/repositories/runs.ts'
import { WorkflowService } from '../../src/services/workflow-service.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'

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
  /** The workflow's entry in the first page of the owner's list (a summary), or null when it is not listed. */
  listed(id: string): Promise<Record<string, any> | null>
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
  listed: async (id) => (await asAlice('GET', '?limit=100')).body.workflows.find((w: { id: string }) => w.id === id) ?? null,
  save: async (id, image) => { await asAlice('POST', `/${id}/save`, { nodes: [node('web', image)], edges: [] }) },
  update: async (id, name) => { await asAlice('PUT', `/${id}`, { name }) },
  status: async (id, status) => { await asAlice('PUT', `/${id}/status`, { status }) },
  createVersion: async (id) => { await asAlice('POST', `/${id}/versions`) },
  restore: async (id, version) => { await asAlice('POST', `/${id}/versions/${version}/restore`) },
  clone: async (id, name) => (await asAlice('POST', `/${id}/clone`, { name })).body,
  remove: async (id) => { await asAlice('DELETE', `/${id}`) },
}

/** `shared`: reads by id through getShared (the cached snapshot itself, as GET /:id reads them). */
function serviceOps(repo: WorkflowRepository, { shared = false }: { shared?: boolean } = {}): Ops {
  const service = new WorkflowService({
    workflows: repo, versions: new VersionRepository(app.db), runs: new RunRepository(app.db), bus: app.bus,
    canDeployTo: async () => true, pluginsByRef: async () => [],
  })
  const owner = alice.user.id
  return {
    create: (name) => service.create(owner, { name }),
    get: (id) => (shared ? service.getShared(owner, id) : service.get(owner, id)).catch(() => null),
    listed: async (id) => ((await service.list(owner, { limit: 100 })).items.find((w) => w.id === id) as Record<string, any> | undefined) ?? null,
    save: async (id, image) => { await service.save(owner, id, { nodes: [node('web', image)], edges: [] }) },
    update: async (id, name) => { await service.update(owner, id, { name }) },
    status: async (id, status) => { await service.setStatus(owner, id, status) },
    createVersion: async (id) => { await service.createVersion(owner, id, {}) },
    restore: async (id, version) => { await service.restoreVersion(owner, id, version) },
    clone: (id, name) => service.clone(owner, id, name),
    remove: (id) => service.delete(owner, id),
  }
}

/** The list's summary of a workflow as GET /:id answers it: every field but the graph, plus its summary. */
const summaryOf = (wf: Record<string, any>) => {
  const { nodes, edges, ...rest } = wf
  return { ...rest, node_count: nodes.length, edge_count: edges.length, node_types: [...new Set(nodes.map((n: { type: string }) => n.type))].sort() }
}

async function noStaleReadAfterAnyWrite(t: Test, ops: Ops) {
  // Reads by id and the list page both, after each write; each write follows both reads, so a cache holds
  // them as they were just before the write.
  const read = async (id: string, what: string) => {
    const wf = await ops.get(id)
    const listed = await ops.listed(id)
    if (wf) t.same(listed, summaryOf(wf), `${what}: the list agrees`)
    else t.equal(listed, null, `${what}: not listed`)
    return wf
  }
  const { id } = await ops.create('original')
  t.same(await ops.listed(id), summaryOf((await ops.get(id))!), 'create: listed at once')
  await ops.save(id, 'nginx:1')
  t.equal((await read(id, 'save'))?.nodes[0].data.image, 'nginx:1', 'save')
  await ops.update(id, 'renamed')
  t.equal((await read(id, 'update'))?.name, 'renamed', 'update')
  await ops.status(id, 'published')
  t.equal((await read(id, 'status'))?.status, 'published', 'status')
  await ops.createVersion(id)
  t.equal((await read(id, 'version'))?.current_version, 1, 'a new version (allocates its number on the workflow)')
  await ops.save(id, 'nginx:2')
  t.equal((await read(id, 'second save'))?.nodes[0].data.image, 'nginx:2', 'a second save')
  await ops.restore(id, 1)
  const restored = await read(id, 'restore')
  t.equal(restored?.nodes[0].data.image, 'nginx:1', 'restore brings the graph back')
  t.equal(restored?.current_version, 2, 'restore records a version')
  const copy = await ops.clone(id, 'copy')
  t.equal((await read(copy.id, 'clone'))?.name, 'copy', 'clone')
  t.equal((await read(id, 'clone source'))?.name, 'renamed', 'the source of a clone is unchanged')
  await ops.remove(id)
  t.equal(await read(id, 'delete'), null, 'delete')
  t.equal((await read(copy.id, 'clone after delete'))?.name, 'copy', 'deleting the source leaves the clone')
}

t.test('no stale read after any write path, over HTTP with the app\'s cache', (t) => noStaleReadAfterAnyWrite(t, httpOps))
t.test('no stale read after any write path, through a cached repository', (t) => noStaleReadAfterAnyWrite(t, serviceOps(new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 10 } }))))
t.test('no stale read after any write path, through a cached repository read by getShared', (t) => noStaleReadAfterAnyWrite(t, serviceOps(new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 10 } }), { shared: true })))
t.test('no stale read after any write path, through an uncached repository', (t) => noStaleReadAfterAnyWrite(t, serviceOps(new WorkflowRepository(app.db))))
t.test('no stale read after any write path, through an uncached repository read by getShared', (t) => noStaleReadAfterAnyWrite(t, serviceOps(new WorkflowRepository(app.db), { shared: true })))

t.test('a shared read is the cached snapshot itself: deep-frozen, one object for every hit until a write', async (t) => {
  const repo = new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 10 } })
  const { id } = await httpOps.create('shared')
  await httpOps.save(id, 'nginx:1')
  const first = (await repo.getShared(alice.user.id, id))!
  t.equal(await repo.getShared(alice.user.id, id), first, 'a hit is the same object (no copy)')
  t.ok(Object.isFrozen(first) && Object.isFrozen(first.nodes) && Object.isFrozen(first.nodes[0]) && Object.isFrozen(first.nodes[0].data), 'frozen all the way down')
  t.throws(() => { (first as { name: string }).name = 'mutated' }, TypeError, 'changing it throws (modules are strict)')
  t.throws(() => { first.nodes.push(node('extra', 'x')) }, TypeError)
  t.throws(() => { (first.nodes[0].data as Record<string, unknown>).image = 'mutated' }, TypeError)
  const copy = (await repo.get(alice.user.id, id))!
  t.not(copy, first, 'get hands out a copy of the same entry')
  t.same(copy, first)
  copy.nodes[0].data = { image: 'mine' }
  t.equal((first.nodes[0].data as { image: string }).image, 'nginx:1', 'which its caller may change without touching the entry')
  t.equal(await repo.getShared(bob.user.id, id), null, 'another owner gets nothing, cached or not')
  await repo.update(alice.user.id, id, { name: 'written' })
  const after = (await repo.getShared(alice.user.id, id))!
  t.not(after, first, 'a write drops the snapshot')
  t.equal(after.name, 'written')
  t.equal(first.name, 'shared', 'a reader still holding the old snapshot keeps what it read')
  t.equal(await repo.getShared(alice.user.id, 'not-an-id'), null)
})

t.test('without the cache a shared read is a private value read from the database', async (t) => {
  const repo = new WorkflowRepository(app.db)
  const { id } = await httpOps.create('uncached shared')
  const a = (await repo.getShared(alice.user.id, id))!
  t.not(await repo.getShared(alice.user.id, id), a)
  t.notOk(Object.isFrozen(a))
})

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

t.test('with the embedded database the app serves list pages from its cache until a write through the repository', async (t) => {
  const { id } = await httpOps.create('page cached')
  t.equal((await httpOps.listed(id))?.name, 'page cached')
  await workflowsColl.updateOne({ _id: id as never }, { $set: { name: 'behind its back' } })
  t.equal((await httpOps.listed(id))?.name, 'page cached', 'served from the cache')
  const include = await asAlice('GET', '?limit=100&include=graph')
  t.equal(include.body.workflows.find((w: { id: string }) => w.id === id)?.name, 'behind its back', 'include=graph pages are never cached')
  const other = await httpOps.create('another workflow')
  t.equal((await httpOps.listed(id))?.name, 'behind its back', 'any write (here: to another workflow) drops every page')
  t.ok(await httpOps.listed(other.id))
})

t.test('a node status written by the watchers is read back at once, and leaves list pages (which do not show it) cached', async (t) => {
  const repo = new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 10 } })
  const { id } = await httpOps.create('status only')
  await httpOps.save(id, 'nginx:1')
  const page = () => repo.list(alice.user.id, { page: 1, limit: 100, sort: 'created_at', order: 'desc' })
  await repo.get(alice.user.id, id)
  const before = await page()
  await workflowsColl.updateOne({ _id: id as never }, { $set: { name: 'behind its back' } })
  t.ok(await repo.setNodeStatus(alice.user.id, id, 'web', { state: 'running', message: 'ready' }))
  t.same((await repo.get(alice.user.id, id))!.nodes[0].data?._status, { state: 'running', message: 'ready' }, 'the read by id sees the status')
  t.same((await repo.getShared(alice.user.id, id))!.nodes[0].data?._status, { state: 'running', message: 'ready' }, 'and so does a shared read')
  t.ok(await repo.setNodeStatus(alice.user.id, id, 'web', { state: 'failed', message: 'crash' }))
  t.same((await repo.getShared(alice.user.id, id))!.nodes[0].data?._status, { state: 'failed', message: 'crash' }, 'a cached snapshot is dropped by the next status too')
  t.same((await page()).items.find((w) => w.id === id), before.items.find((w) => w.id === id), 'the page is still the cached one (the name changed behind its back is not in it)')
})

t.test('a shared list read is the cached page itself: deep-frozen, one object for every hit until a write', async (t) => {
  const repo = new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 10 } })
  const owner = alice.user.id
  const { id } = await repo.create(owner, { name: 'shared page', description: '', cluster_id: null })
  const req = { limit: 100, sort: 'name' as const, order: 'asc' as const }
  const first = await repo.listShared(owner, req)
  t.equal(await repo.listShared(owner, req), first, 'a hit is the same object (no copy)')
  t.ok(Object.isFrozen(first) && Object.isFrozen(first.items) && Object.isFrozen(first.items[0]) && Object.isFrozen(first.items[0].node_types))
  t.throws(() => { (first.items as unknown[]).pop() }, TypeError)
  const copy = await repo.list(owner, req)
  t.not(copy, first, 'list hands out a copy of the same page')
  t.same(copy, first)
  copy.items.length = 0
  t.ok(first.items.length > 0, 'which its caller may change without touching the page')
  t.same(await repo.listShared(owner, { ...req, order: 'desc' }), { ...first, items: [...first.items].reverse() }, 'another query is another page')
  t.same((await repo.listShared(bob.user.id, req)).items, [], 'another owner has their own pages')
  await repo.update(owner, id, { name: 'shared page renamed' })
  const after = await repo.listShared(owner, req)
  t.not(after, first, 'a write drops the pages')
  t.equal(after.items.find((w) => w.id === id)?.name, 'shared page renamed')
  const uncached = new WorkflowRepository(app.db)
  const a = await uncached.listShared(owner, req)
  t.not(await uncached.listShared(owner, req), a, 'without the cache every read is a private value')
  t.notOk(Object.isFrozen(a))
})

t.test('list pages are per owner and per query', async (t) => {
  const { id } = await httpOps.create('zz alice page')
  const mine = await asAlice('GET', '?limit=100&sort=name&order=asc')
  const bobs = await asBob('GET', '?limit=100&sort=name&order=asc')
  t.ok(mine.body.workflows.some((w: { id: string }) => w.id === id))
  t.same(bobs.body, { workflows: [], total: 0, page: 1, limit: 100 }, 'bob\'s page is his own')
  const desc = await asAlice('GET', '?limit=100&sort=name&order=desc')
  t.same(desc.body.workflows.map((w: { id: string }) => w.id), [...mine.body.workflows].reverse().map((w: { id: string }) => w.id), 'another order is another page')
  const searched = await asAlice('GET', '?limit=100&search=zz%20alice')
  t.same(searched.body.workflows.map((w: { id: string }) => w.id), [id], 'another search is another page')
  const published = await asAlice('GET', '?limit=100&status=published')
  t.notOk(published.body.workflows.some((w: { id: string }) => w.id === id), 'another status filter is another page')
  const second = await asAlice('GET', '?limit=1&page=2&sort=name&order=asc')
  t.same(second.body.workflows.map((w: { id: string }) => w.id), [mine.body.workflows[1].id], 'another page number is another page')
})

t.test('a list read that started before a write does not store what it read', async (t) => {
  // The repository's collection, with countDocuments (the list's second query) held after the database answered.
  let hold: { answered: () => void; release: Promise<void> } | null = null
  const db = {
    collection: (name: string) => {
      const c = app.db.collection(name)
      return new Proxy(c, {
        get: (target, key) => key !== 'countDocuments' ? Reflect.get(target, key) : async (...args: unknown[]) => {
          const n = await (target.countDocuments as (...a: unknown[]) => Promise<unknown>)(...args)
          const h = hold
          if (h) { hold = null; h.answered(); await h.release }
          return n
        },
      })
    },
  } as unknown as Db
  const repo = new WorkflowRepository(db, undefined, { cache: { maxEntries: 10 } })
  const owner = alice.user.id
  const { id } = await repo.create(owner, { name: 'list before', description: '', cluster_id: null })
  const nameIn = async (page: Promise<{ items: Array<{ id: string; name: string }> }>) => (await page).items.find((w) => w.id === id)?.name

  let answered!: () => void
  let release!: () => void
  const readAnswered = new Promise<void>((r) => { answered = r })
  hold = { answered, release: new Promise<void>((r) => { release = r }) }
  const slowList = repo.list(owner, { limit: 100 })
  await readAnswered
  await repo.update(owner, id, { name: 'list after' })
  release()
  t.equal(await nameIn(slowList), 'list before', 'the slow list answers what it read (it overlapped the write)')
  t.equal(await nameIn(repo.list(owner, { limit: 100 })), 'list after', 'but did not cache it: the next list sees the write')
  await workflowsColl.updateOne({ _id: id as never }, { $set: { name: 'behind its back' } })
  t.equal(await nameIn(repo.list(owner, { limit: 100 })), 'list after', 'that list was cached (the cache is in use here)')
})

t.test('the page cache keeps at most 100 pages, dropping the least recently used', async (t) => {
  const repo = new WorkflowRepository(app.db, undefined, { cache: { maxEntries: 10 } })
  const owner = alice.user.id
  const { id } = await repo.create(owner, { name: 'aaa first by name', description: '', cluster_id: null })
  const first = async () => (await repo.list(owner, { limit: 1, sort: 'name', order: 'asc' })).items[0]?.name
  t.equal(await first(), 'aaa first by name')
  for (let page = 1; page <= 100; page++) await repo.list(owner, { limit: 1, page, sort: 'name', order: 'desc' })
  await workflowsColl.updateOne({ _id: id as never }, { $set: { name: 'aaa changed behind' } })
  t.equal(await first(), 'aaa changed behind', '100 other pages since: the first one was evicted and read again')
  await workflowsColl.updateOne({ _id: id as never }, { $set: { name: 'aaa changed twice' } })
  t.equal(await first(), 'aaa changed behind', 'and is cached again')
})

// The writes that come from outside the workflow routes: a run's lock and counters, and a diagnostics fix.
const sim = await startTestCluster(t)
const cluster = await app.inject({ method: 'POST', url: '/v1/api/clusters', headers: alice.headers, payload: simClusterBody(sim, 'sim') })
if (cluster.statusCode !== 201) throw new Error(`cluster: ${cluster.statusCode} ${cluster.body}`)

async function workflowOnSim(name: string, nodes: object[], edges: object[] = []): Promise<string> {
  const { id } = (await asAlice('POST', '', { name, cluster_id: 'sim' })).body
  if ((await asAlice('POST', `/${id}/save`, { nodes, edges })).status !== 200) throw new Error('save failed')
  return id
}

t.test('no stale read after a run: the lock, the version it allocates and the counters', async (t) => {
  const id = await workflowOnSim('runs', [{ id: 'cfg', type: 'configmap', position: { x: 0, y: 0 }, data: { name: 'settings', namespace: 'cache-test', data: { A: '1' } } }])
  const before = await httpOps.get(id)
  t.match(before, { run_count: 0, success_count: 0, failure_count: 0, last_run_at: null, current_version: 0 })
  t.match(await httpOps.listed(id), { run_count: 0 })
  const finished = app.bus.next('run.finished', (e) => e.workflow_id === id)
  const run = await asAlice('POST', `/${id}/run`, {})
  t.equal(run.status, 200, JSON.stringify(run.body))
  t.equal(run.body.status, 'completed', JSON.stringify(run.body.error))
  await finished
  const after = (await httpOps.get(id))!
  t.match(after, { run_count: 1, success_count: 1, failure_count: 0, current_version: 1 }, 'counters and the run\'s version')
  t.equal(after.last_run_at, run.body.finished_at, 'last_run_at is the run\'s end')
  t.same(await httpOps.listed(id), summaryOf(after), 'the list agrees')

  const dry = await asAlice('POST', `/${id}/run`, { dry_run: true })
  t.equal(dry.body.status, 'completed', JSON.stringify(dry.body.error))
  t.match(await httpOps.get(id), { run_count: 1, current_version: 1 }, 'a dry run counts nothing')

  // A second real run after both were read again (cached): the next lock must still be free, the counters move.
  const again = await asAlice('POST', `/${id}/run`, {})
  t.equal(again.status, 200, JSON.stringify(again.body))
  t.match(await httpOps.get(id), { run_count: 2, success_count: 2, current_version: 2 }, 'a second run: its lock was released and taken again')
  t.match(await httpOps.listed(id), { run_count: 2, current_version: 2 })
})

t.test('no stale read after a diagnostics fix', async (t) => {
  const id = await workflowOnSim('fixes', [
    { id: 'cfg', type: 'configmap', position: { x: 0, y: 0 }, data: { name: 'cfg', data: { A: '1' } } },
    { id: 'web', type: 'deployment', position: { x: 0, y: 0 }, data: { name: 'web', namespace: 'shop', image: 'nginx:1.27', resources: { requests: { cpu: '100m', memory: '64Mi' } } } },
  ], [{ id: 'e1', source: 'cfg', target: 'web' }])
  const before = (await httpOps.get(id))!
  t.equal(before.nodes[0].data.namespace, undefined)
  await httpOps.listed(id)
  const fixed = await asAlice('POST', `/${id}/nodes/cfg/fix`, { fix_type: 'missing-namespace' })
  t.equal(fixed.status, 200, JSON.stringify(fixed.body))
  const after = (await httpOps.get(id))!
  t.equal(after.nodes[0].data.namespace, 'shop', 'the fixed graph')
  t.not(after.updated_at, before.updated_at, 'saved like POST /save')
  t.same(after, fixed.body.workflow, 'what the fix answered')
  t.same(await httpOps.listed(id), summaryOf(after), 'the list agrees')
})
