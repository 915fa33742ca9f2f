// Several replicas of the service as real processes (API.md §11): one embedded database served over its Unix
// socket (`npm run embedded-db`, in memory), the simulator in this process, and N `src/server.ts` processes
// on that database (MONGODB_URI set → shared mode). One set per test file: the machine has two cores.
// Everything waits on a condition with a bound; teardown SIGKILLs whatever is still alive.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { MongoClient, type Db } from 'mongodb'
import { startTestCluster, simClusterBody } from './kube.ts'
import { freePort } from './ports.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import type { KubeSim, KubeSimOptions } from '../kube-sim/index.ts'
import type { WatchInfo } from '../kube-sim/watch.ts'

const root = new URL('../..', import.meta.url).pathname
const execFileP = promisify(execFile)

interface Teardown { teardown(fn: () => unknown): void; passing?(): boolean; comment?(...args: unknown[]): void }

export interface Replica {
  /** 0-based position in `replicas`. */
  readonly index: number
  readonly child: ChildProcess
  readonly pid: number
  readonly base: string
  /** stdout and stderr so far. */
  output(): string
  readonly alive: boolean
  /** SIGKILL (nothing runs on the way out) and wait for the exit. */
  kill(): Promise<void>
}

export interface ApiResult { status: number; body: any; headers: Headers } // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ReplicaHarness {
  sim: KubeSim
  /** The driver on the same database the replicas use (leases, runs, events are read here). */
  db: Db
  mongo: MongoClient
  dbUri: string
  /** The embedded database's process (its CPU time is the benchmark's measure of load). */
  dbPid: number
  replicas: Replica[]
  /** The admin who registered the simulator as cluster `sim`. */
  token: string
  /** The id the service gave the simulator's cluster (leases are keyed by it). */
  clusterId: string
  auth: Record<string, string>
  api(replica: Replica, method: string, path: string, body?: object): Promise<ApiResult>
  /** A workflow on cluster `sim` with this graph (created and saved through `replica`). */
  workflow(replica: Replica, graph: { nodes: object[]; edges: object[] }, name: string): Promise<string>
  kubectl(...args: string[]): Promise<string>
  /** GET /debug/watches on the simulator. */
  watches(): Promise<WatchInfo[]>
  /** The replica whose id holds the lease of a cluster (ids are `<host>-<pid>-<random>`), if any alive one does. */
  leaseHolder(clusterId: string): Promise<{ replica: Replica | undefined; lease: Record<string, unknown> | null }>
  config: { leaseTtlMs: number; eventPollMs: number }
  /** How long the start took (database, replicas ready, user and cluster registered). */
  startedInMs: number
}

export interface ReplicaOptions {
  count?: number
  /** Extra environment for every replica. */
  env?: Record<string, string>
  sim?: KubeSimOptions
  leaseTtlMs?: number
  eventPollMs?: number
  /** Bound on the start of everything (tsx compiles on start; three at once on two cores). */
  startTimeoutMs?: number
  /** The database URI replica `index` gets (default: the database's own); the benchmark puts a counting proxy here. */
  replicaDbUri?: (dbUri: string, index: number) => Promise<string>
}

/** Spawns `npm run embedded-db` (in memory, Unix socket) and resolves with the URI it prints. */
async function startEmbeddedDb(timeoutMs: number, started: (child: ChildProcess) => void): Promise<{ uri: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/embedded-mongo/cli.ts'], {
    cwd: root, env: { ...process.env, EMBEDDED_DB: 'memory', EMBEDDED_DB_PORT: undefined }, stdio: ['ignore', 'pipe', 'pipe'],
  })
  kill.add(child)
  started(child)
  let stderr = ''
  child.stderr!.on('data', (d) => { stderr += d })
  const lines = createInterface({ input: child.stdout! })
  const uri = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`embedded-db printed no URI within ${timeoutMs} ms:\n${stderr}`)), timeoutMs)
    lines.once('line', (l) => { clearTimeout(timer); resolve(l.trim()) })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`embedded-db exited (${code}):\n${stderr}`)) })
  })
  if (!uri.startsWith('mongodb://')) throw new Error(`embedded-db printed '${uri}', not a mongodb:// URI`)
  return { uri, child }
}

// A crashed test process must not leave servers behind on the machine.
const kill = new Set<ChildProcess>()
process.once('exit', () => { for (const c of kill) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL') })

export async function startReplicas(t: Teardown, options: ReplicaOptions = {}): Promise<ReplicaHarness> {
  const count = options.count ?? 3
  // Short, so a takeover test takes seconds; not shorter: a renewal every TTL/3 must survive a process stalled
  // for a second on a busy machine, or the lease changes hands with nobody dead.
  const leaseTtlMs = options.leaseTtlMs ?? 3000
  const eventPollMs = options.eventPollMs ?? 50
  const startTimeoutMs = options.startTimeoutMs ?? 90_000
  const startedAt = Date.now()
  const sim = await startTestCluster(t, options.sim)
  const replicas: Replica[] = []
  let dbChild: ChildProcess | undefined
  let mongo: MongoClient | undefined
  // One teardown, in order: the servers (SIGKILL), the driver, then the database (SIGTERM, SIGKILL if it lingers).
  t.teardown(async () => {
    // What the servers said is the only trace of a cross-process failure: the tail of each goes to the report.
    // Request lines are left out: they say nothing the test's own assertions do not.
    if (t.passing && !t.passing()) for (const r of replicas) t.comment?.(`replica ${r.index + 1} (pid ${r.pid}), last lines:\n${r.output().split('\n').filter((l) => !l.includes('"reqId"')).slice(-25).join('\n')}`)
    await Promise.all(replicas.map((r) => r.kill()))
    await mongo?.close(true).catch(() => undefined)
    const child = dbChild
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  })
  const database = await startEmbeddedDb(startTimeoutMs, (c) => { dbChild = c })
  const dbName = 'replicas'
  mongo = new MongoClient(database.uri, { serverSelectionTimeoutMS: 5000 })
  await mongo.connect()
  const client = mongo
  const secrets = { JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64') }

  const spawnReplica = async (index: number): Promise<Replica> => {
    const port = await freePort()
    const dbUri = options.replicaDbUri ? await options.replicaDbUri(database.uri, index) : database.uri
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: root,
      env: {
        ...process.env, ...secrets, PORT: String(port), HOST: '127.0.0.1', MONGODB_URI: dbUri, MONGODB_DB: dbName,
        NODE_ENV: 'development', LOG_LEVEL: 'info', REPLICA_MODE: 'auto', RUN_REPLY_WAIT_MS: '0', RUN_READY_TIMEOUT_MS: '8000',
        // A run silent for three heartbeats is taken for dead by the other replicas: on a busy 2-core machine
        // a process can stall for most of a second, so a second between beats, not the restart tests' 200 ms.
        RUN_HEARTBEAT_MS: '1000', LEASE_TTL_MS: String(leaseTtlMs), EVENT_POLL_MS: String(eventPollMs), ALLOW_INSECURE_CLUSTERS: 'true',
        SSE_HEARTBEAT_MS: '15000', CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *', ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    kill.add(child)
    let output = ''
    child.stdout!.on('data', (d) => { output += d })
    child.stderr!.on('data', (d) => { output += d })
    const exited = new Promise<void>((r) => child.once('exit', () => r()))
    const replica: Replica = {
      index, child, pid: child.pid!, base: `http://127.0.0.1:${port}`,
      output: () => output,
      get alive() { return child.exitCode === null && child.signalCode === null },
      async kill() { if (replica.alive) child.kill('SIGKILL'); await exited },
    }
    return replica
  }
  for (let i = 0; i < count; i++) replicas.push(await spawnReplica(i))
  // In parallel: each answers /readyz 200 once its database, indexes and services are up.
  await Promise.all(replicas.map((r) => waitFor(`replica ${r.index} to be ready`, async () => {
    if (!r.alive) throw new Error(`replica ${r.index} exited early:\n${r.output()}`)
    return fetch(`${r.base}/readyz`).then((res) => res.ok, () => false)
  }, startTimeoutMs, 100)))

  const api = async (replica: Replica, method: string, path: string, body?: object, token?: string): Promise<ApiResult> => {
    const res = await fetch(`${replica.base}${path}`, {
      method, signal: AbortSignal.timeout(20_000),
      headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body && { 'content-type': 'application/json' }) },
      ...(body && { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    let parsed: unknown
    try { parsed = text ? JSON.parse(text) : undefined } catch { parsed = text }
    return { status: res.status, body: parsed, headers: res.headers }
  }
  const reg = await api(replicas[0]!, 'POST', '/v1/api/auth/register', { email: 'ops@example.test', password: 'pw-replicas-0123456', name: 'Ops' })
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`)
  const token = reg.body.token as string
  const cluster = await api(replicas[0]!, 'POST', '/v1/api/clusters', simClusterBody(sim, 'sim'), token)
  if (cluster.status !== 201) throw new Error(`cluster: ${cluster.status} ${JSON.stringify(cluster.body)}`)
  const kubeconfig = sim.kubeconfigPath()

  return {
    sim, db: client.db(dbName), mongo: client, dbUri: database.uri, dbPid: database.child.pid!, replicas, token, clusterId: String(cluster.body.id), auth: { authorization: `Bearer ${token}` },
    config: { leaseTtlMs, eventPollMs }, startedInMs: Date.now() - startedAt,
    api: (replica, method, path, body) => api(replica, method, path, body, token),
    async workflow(replica, graph, name) {
      const wf = await api(replica, 'POST', '/v1/api/workflows', { name, cluster_id: 'sim' }, token)
      if (wf.status !== 201) throw new Error(`workflow: ${wf.status} ${JSON.stringify(wf.body)}`)
      const saved = await api(replica, 'POST', `/v1/api/workflows/${wf.body.id}/save`, graph, token)
      if (saved.status !== 200) throw new Error(`save: ${saved.status} ${JSON.stringify(saved.body)}`)
      return wf.body.id as string
    },
    kubectl: async (...args) => (await execFileP('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 20_000 })).stdout,
    async watches() {
      const r = await raw(sim, 'GET', '/debug/watches')
      if (r.status !== 200) throw new Error(`GET /debug/watches: ${r.status} ${r.text}`)
      return r.json.watches as WatchInfo[]
    },
    async leaseHolder(clusterId) {
      const lease = await client.db(dbName).collection<{ _id: string; holder?: unknown }>('leases').findOne({ _id: clusterId })
      const holder = typeof lease?.holder === 'string' ? lease.holder : ''
      const pid = Number(/-(\d+)-[0-9a-f]+$/.exec(holder)?.[1])
      return { replica: replicas.find((r) => r.alive && r.pid === pid), lease }
    },
  }
}
