// Schema-driven fuzzing of every operation in the generated OpenAPI document: requests built from the
// route schemas, valid and hostile, as anonymous, a plain user, an admin and forged tokens, against real
// records of both users. Whatever is sent, the service answers a status the operation documents, never a
// 5xx other than a documented 502/503, errors as exactly `{error}`, and no stack trace, driver text or
// seeded secret, in a reply or (for secrets) in the log. Deterministic: the shared fixed seed, printed
// (test/helpers/seed.ts; FC_SEED overrides it), FUZZ_RUNS the runs per operation, FUZZ_REPORT=<file>
// writes the findings as JSON.
import t from 'tap'
import fc from 'fast-check'
import { SEED as SHARED_SEED, runs } from '../helpers/seed.ts'
import { writeFileSync } from 'node:fs'
import { createHmac, randomBytes } from 'node:crypto'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { FuzzWorld, type Seeded } from '../helpers/fuzz-fixtures.ts'
import { judge, type Breach } from '../helpers/fuzz-oracle.ts'
import { buildRequest, describeRequest, operationsOf, planArbitrary, type BuiltRequest, type Operation, type PathPools, type RequestPlan, type Role } from '../helpers/fuzz-requests.ts'
import type { JsonSchema } from '../helpers/fuzz-schema.ts'

// Longer than the suite's 120 s per file: this file does much more work, and a loaded machine doubles it.
t.setTimeout(360_000)

const SEED = SHARED_SEED
const RUNS = Number(process.env.FUZZ_RUNS ?? runs(40))
/** Requests spent shrinking one counterexample before settling for the smallest found so far. */
const SHRINK_BUDGET = 60
/** Distinct kinds of breach shrunk and reported per operation; more are listed by name only. */
const MAX_KINDS = 6

t.comment(`fuzz seed ${SEED}, ${RUNS} runs per operation (override with FC_SEED, FUZZ_RUNS)`)

// The sign-in limits are raised so the fuzzer reaches validation and handlers instead of the limiter;
// the limits themselves are tested in test/auth/rate-limit.test.ts. The service's own outbound policy
// keeps every connection it makes on loopback, whatever address a fuzzed body names.
const sim = await startTestCluster(t)
const { app, logs, config } = await startTestApp(t, {
  AUTH_RATE_LIMIT_PER_IP: 1_000_000, AUTH_RATE_LIMIT_PER_EMAIL: 1_000_000, RATE_LIMIT_MAX: 1_000_000, CLUSTER_TIMEOUT_MS: 2000,
  OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8,::1/128', RUN_READY_TIMEOUT_MS: 5000,
})
const admin = await registerUser(app, { email: 'fuzz-admin@example.test' })
const user = await registerUser(app, { role: 'user', email: 'fuzz-user@example.test' })
const world = new FuzzWorld(app, admin, user)
for (const key of [config.JWT_SECRET, config.ENCRYPTION_KEY]) if (key) world.secrets.push(key)
// Real ids past their 404: the simulator as a cluster, workflows run on it (runs, resources with live
// objects), builds. Created once; every operation's pools put them first.
const liveStarted = performance.now()
const live = await world.live(sim)
t.comment(`live records (simulator cluster, 2 runs, ${live.pools['resources/id'].length} resources, 2 builds) made in ${Math.round(performance.now() - liveStarted)} ms`)

// Tokens that must be refused: no signature, a user's signature over admin claims, another key's
// signature over the admin's own claims.
const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url')
const [, userClaims, userSignature] = user.token.split('.')
const adminClaims = { ...JSON.parse(Buffer.from(userClaims, 'base64url').toString()), sub: admin.user.id, role: 'admin', email: admin.email }
const forged = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(adminClaims)}.`
const tampered = `${user.token.split('.')[0]}.${b64(adminClaims)}.${userSignature}`
const signed = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(adminClaims)}`
const wrongKey = `${signed}.${createHmac('sha256', randomBytes(32)).update(signed).digest('base64url')}`
const tokens: Record<Role, string | undefined> = { anonymous: undefined, user: user.token, admin: admin.token, forged, tampered, 'wrong-key': wrongKey }

const doc = app.swagger() as JsonSchema
// Deletions run last, each on records of its own, so the records the other operations share stay put;
// nested ones (a share, a resource) before their parents, so the live records are still there for them.
const depth = (o: Operation) => o.path.split('/').length
const operations = operationsOf(doc).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE') || (a.method === 'DELETE' ? depth(b) - depth(a) : 0))

interface Finding {
  operation: string
  kinds: string[]
  request: string
  status: number
  body: string
  details: string[]
  /** The server's own account of a 5xx (from the test app's log), for whoever fixes it. */
  log: string[]
}
const findings: Finding[] = []
/** Per operation: how long the first pass took and which statuses it saw (what the fuzzer reached). */
const timings: Array<{ operation: string; firstPassMs: number; statuses: Record<number, number> }> = []

function serverErrors(lines: string[]): string[] {
  const out: string[] = []
  for (const line of lines) {
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { type?: string; message?: string; stack?: string } }
      if ((entry.level ?? 0) >= 40) out.push(entry.err?.stack ?? `${entry.msg ?? ''} ${entry.err?.message ?? ''}`.trim())
    } catch { /* not a JSON line */ }
  }
  return out
}

let shared: Seeded | undefined

type Outcome = { request: BuiltRequest; plan: RequestPlan; status: number; body: string; breaches: Breach[]; log: string[] }

async function send(operation: Operation, plan: RequestPlan, pools: PathPools): Promise<Outcome> {
  const request = buildRequest(operation, plan, pools, tokens)
  const logFrom = logs.length
  const res = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.payload !== undefined && { payload: request.payload }) })
  const breaches = judge(operation, res.statusCode, res.body, world.secrets)
  return { request, plan, status: res.statusCode, body: res.body, breaches, log: logs.slice(logFrom) }
}

/** One pass over RUNS generated requests, grouping breaches by kind; then each kind's first
 * counterexample is replayed (fast-check `path`) and shrunk on its own, within SHRINK_BUDGET requests. */
async function fuzzOperation(operation: Operation): Promise<Finding[]> {
  const name = `${operation.method} ${operation.path}`
  // Records are shared by the operations that leave them in place. A deletion gets its own, and so does
  // every operation that connects out: an earlier update may have pointed a shared registry at its
  // type's public default address, and the fuzzer must not leave the machine.
  const connects = /\/(test|refresh|metrics)$/.test(operation.path)
  if (operation.method === 'DELETE' || connects || !shared) shared = await world.seed(String(operations.indexOf(operation)), live)
  const seeded = shared
  const plans = planArbitrary(operation, { doc, hint: world.hints(seeded), bodyHint: world.bodyHints(seeded) })
  const firstRun = new Map<string, { index: number; outcome: Outcome }>()
  let run = 0
  const statuses: Record<number, number> = {}
  const started = performance.now()
  await fc.assert(fc.asyncProperty(plans, async (plan) => {
    const outcome = await send(operation, plan, seeded.pools)
    statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1
    for (const b of outcome.breaches) if (!firstRun.has(b.kind)) firstRun.set(b.kind, { index: run, outcome })
    run++
  }), { seed: SEED, numRuns: RUNS })
  timings.push({ operation: name, firstPassMs: Math.round(performance.now() - started), statuses })
  // A fuzzed update may have pointed the simulator cluster elsewhere: later operations aim at it again.
  if (operation.method !== 'GET' && operation.path.startsWith('/v1/api/clusters/{name}')) await world.restore(sim, live)
  if (operation.method !== 'GET' && operation.method !== 'DELETE' && operation.path.startsWith('/v1/api/workflows/{id}')) await world.restoreWorkflows(live)

  const found: Finding[] = []
  const covered = new Set<string>()
  for (const [kind, first] of [...firstRun].slice(0, MAX_KINDS)) {
    if (covered.has(kind)) continue
    let steps = 0
    let smallest: Outcome | undefined
    await fc.check(fc.asyncProperty(plans, async (plan) => {
      if (steps++ > SHRINK_BUDGET) return true
      const outcome = await send(operation, plan, seeded.pools)
      if (!outcome.breaches.some((b) => b.kind === kind)) return true
      smallest = outcome
      return false
    }), { seed: SEED, numRuns: RUNS, path: String(first.index) })
    // State moves on (records are created and deleted), so a replay may no longer fail: then the
    // request the first pass saw is the counterexample.
    smallest ??= first.outcome
    for (const b of smallest.breaches) covered.add(b.kind)
    found.push({
      operation: name,
      kinds: smallest.breaches.map((b) => b.kind),
      request: describeRequest(smallest.request, smallest.plan.role),
      status: smallest.status,
      body: smallest.body.length > 300 ? `${smallest.body.slice(0, 300)}…` : smallest.body,
      details: smallest.breaches.map((b) => b.detail),
      log: smallest.status >= 500 ? serverErrors(smallest.log) : [],
    })
  }
  const missed = [...firstRun.keys()].filter((k) => !covered.has(k))
  if (missed.length) found.push({ operation: name, kinds: missed, request: '(further kinds; rerun with a larger MAX_KINDS or fix the ones above)', status: 0, body: '', details: [], log: [] })
  return found
}

// The oracle is what makes a green run mean something: each breach it exists for is flagged.
t.test('the oracle flags 5xx, undocumented statuses, bodies other than {error}, stacks, driver text and secrets', async (t) => {
  const op: Operation = { method: 'GET', path: '/x', op: { responses: { 200: {}, 404: {}, 502: {} } } }
  const kinds = (status: number, body: string) => judge(op, status, body, ['s3cr3t-value']).map((b) => b.kind)
  t.same(kinds(200, '{"ok":true}'), [])
  t.same(kinds(404, '{"error":"not found"}'), [])
  t.same(kinds(502, '{"error":"cluster did not answer"}'), [])
  t.same(kinds(500, '{"error":"internal server error"}'), ['status 500'])
  t.same(kinds(503, '{"error":"closing"}'), ['status 503'])
  t.same(kinds(400, '{"error":"bad"}'), ['undocumented 400'])
  t.same(kinds(404, '{"error":"x","code":"FST_ERR"}'), ['error body of 404 is not {error}'])
  t.same(kinds(404, 'not found'), ['error body of 404 is not {error}'])
  t.same(kinds(200, '{"m":"Error: x\\n    at f (/srv/app/src/a.ts:1:2)"}'), ['stack trace in body'])
  t.same(kinds(200, '{"error":"MongoServerError: E11000 duplicate key"}'), ['driver text in body'])
  t.same(kinds(200, '{"token":"s3cr3t-value"}'), ['secret in body'])
})

for (const operation of operations) {
  t.test(`${operation.method} ${operation.path}: only documented statuses, no 5xx, errors are {error}, nothing leaks`, async (t) => {
    const found = await fuzzOperation(operation)
    findings.push(...found)
    t.same(found.map((f) => `${f.kinds.join(' + ')} <- ${f.request} -> ${f.status} ${f.body}${f.log.length ? `\n    server log: ${f.log[0].split('\n').slice(0, 6).join('\n      ')}` : ''}`), [],
      `fuzzed with seed ${SEED}, ${RUNS} runs`)
    // A service that refused everyone would pass the checks above: the runs must get past sign-in.
    const seen = Object.keys(timings.find((x) => x.operation === `${operation.method} ${operation.path}`)?.statuses ?? {})
    t.ok(seen.some((s) => s !== '401'), `requests got past authentication (statuses seen: ${seen.join(', ')})`)
  })
}

t.test('the fuzzer reaches the success path of most operations', async (t) => {
  const reached = timings.filter((x) => Object.keys(x.statuses).some((s) => /^[23]/.test(s)))
  const missed = timings.filter((x) => !reached.includes(x)).map((x) => x.operation)
  t.ok(reached.length >= 0.7 * timings.length, `${reached.length} of ${timings.length} operations answered a success; not: ${missed.join(', ')}`)
})

// With only made-up ids these end at 404 (or 502 on a closed port): the live records take them through.
t.test('id-based operations reach their success path with real ids (runs, resources, pods, builds, cluster calls)', async (t) => {
  const byId = ['GET /v1/api/workflows/{id}/runs/{runId}', 'POST /v1/api/workflows/{id}/run', 'GET /v1/api/workflows/{id}/nodes/{nodeId}/diagnostics',
    'GET /v1/api/resources/{id}', 'PATCH /v1/api/resources/{id}', 'GET /v1/api/resources/{id}/pods', 'GET /v1/api/builds/{id}',
    'POST /v1/api/clusters/{name}/test', 'POST /v1/api/clusters/{name}/refresh', 'GET /v1/api/clusters/{name}/metrics']
  const succeeded = byId.filter((op) => Object.keys(timings.find((x) => x.operation === op)?.statuses ?? {}).some((s) => /^2/.test(s)))
  // Most, not all: another seed may send a given operation too few valid requests.
  t.ok(succeeded.length >= byId.length - 2, `${succeeded.length} of ${byId.length} answered a success; not: ${byId.filter((op) => !succeeded.includes(op)).join(', ')}`)
})

t.test('no seeded secret reaches the log', async (t) => {
  const leaked = world.secrets.filter((secret) => logs.some((line) => line.includes(secret)))
  t.same(leaked.map((s) => `${s.slice(0, 6)}…`), [])
})

// The audit log saw every fuzzed state-changing request (API.md §12): none of its entries holds a seeded
// secret or any token sent, whatever the body, query or path carried.
t.test('no seeded secret or token reaches an audit entry', async (t) => {
  await app.audit.recorder.flush()
  const entries = await app.db.collection('audit').find({}).toArray()
  t.ok(entries.length >= operations.filter((o) => o.method !== 'GET').length, `${entries.length} audit entries written`)
  const text = entries.map((e) => JSON.stringify(e))
  const sent = Object.values(tokens).filter((v): v is string => typeof v === 'string')
  const leaked = [...world.secrets, ...sent].filter((secret) => text.some((line) => line.includes(secret)))
  t.same(leaked.map((s) => `${s.slice(0, 6)}…`), [])
})

t.teardown(() => {
  if (process.env.FUZZ_REPORT) writeFileSync(process.env.FUZZ_REPORT, JSON.stringify({ seed: SEED, runs: RUNS, operations: operations.length, findings, timings }, null, 2))
})
