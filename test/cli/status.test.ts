// cwo status against the live service and the simulator: the nodes' live status, and -w following the
// workflow's stream while a run (started through the API once the follower has its snapshot) goes on.
import t from 'tap'
import { startCliWorld } from './harness.ts'
import { deployment, runFinished, workflow } from './runs-fixture.ts'

const w = await startCliWorld(t, { timing: { podStartMs: 5, podReadyMs: 5 } }, { RUN_REPLY_WAIT_MS: 0, RUN_READY_TIMEOUT_MS: 1500 })

const ok = await workflow(w, 'status-ok', [deployment('st-ok', 'nginx:1.25')])
const broken = await workflow(w, 'status-broken', [deployment('st-broken', 'acme/fail-pull:1')])

const startRun = async (id: string, body: object = {}) => {
  const res = await w.app.app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/run`, headers: w.user.headers, payload: body })
  if (res.statusCode !== 202 && res.statusCode !== 200) throw new Error(`run: ${res.statusCode} ${res.body}`)
  return res.json().id as string
}

/** Runs `cwo status ... -w`, calling `started` once its first output (the snapshot) arrived: the stream is open. */
function follow(args: string[], started: () => unknown, signal?: AbortSignal) {
  let fired = false
  return w.cwo(['status', ...args, '-w'], { signal, onStdout: () => { if (!fired) { fired = true; void started() } } })
}

t.test('before any run: the nodes, without a state', async (t) => {
  const r = await w.cwo(['status', 'status-ok'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^NODE\s+TYPE\s+NAME\s+STATE\s+READY\s+MESSAGE\n/)
  t.match(r.stdout, /^web\s+deployment\s+web\n/m)
})

t.test('-w prints the snapshot, then a line per node update and status change, and exits 0 when the run completes', async (t) => {
  let runId: Promise<string> | undefined
  const r = await follow(['status-ok'], () => { runId = startRun(ok) })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^NODE\s+TYPE/, 'the snapshot first')
  t.match(r.stdout, /^web Deployment: \w+/m, 'a node update')
  t.match(r.stdout, new RegExp(`\\nrun ${await runId} completed\\n$`), 'ends with the run\'s end')
})

t.test('after the run: each node\'s state, ready count and message; -o json is the whole workflow', async (t) => {
  const r = await w.cwo(['status', 'status-ok'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^web\s+deployment\s+web\s+running\s+1\/1\s+\S/m)
  const json = await w.cwo(['status', 'status-ok', '-o', 'json'])
  t.equal(json.code, 0, json.stderr)
  t.match(JSON.parse(json.stdout), { id: ok, name: 'status-ok', nodes: [{ id: 'web', data: { _status: { state: 'running' } } }] })
})

t.test('-w -o json: JSON lines, from the metadata snapshot to the failed run\'s complete; exit 3', async (t) => {
  let runId: Promise<string> | undefined
  const r = await follow(['status-broken', '-o', 'json'], () => { runId = startRun(broken) })
  t.equal(r.code, 3, r.stderr)
  const events = r.stdout.trim().split('\n').map((line) => JSON.parse(line) as { event: string; data: Record<string, unknown> })
  t.equal(events[0].event, 'metadata')
  t.equal(events[0].data.id, broken)
  t.ok(events.some((e) => e.event === 'node_update' && e.data.node_id === 'web'), 'node updates')
  t.same(events.at(-1), { event: 'complete', data: { run_id: await runId, status: 'failed' } })
  t.match(r.stderr, /^cwo: run \w+ failed: .*Deployment web/m)
})

t.test('-w is not ended by a dry run (it changes nothing), only by the next real run', async (t) => {
  let realRun: Promise<string> | undefined
  const r = await follow(['status-ok'], async () => {
    const dry = runFinished(w, ok)
    await startRun(ok, { dry_run: true })
    await dry
    realRun = startRun(ok)
  })
  t.equal(r.code, 0, r.stderr)
  const completes = r.stdout.split('\n').filter((line) => /^run \w+ completed$/.test(line))
  t.equal(completes.length, 2, 'the dry run\'s end, then the run\'s')
  t.equal(completes[1], `run ${await realRun} completed`)
})

t.test('-w interrupted (Ctrl-C) exits 130', async (t) => {
  const ctrlC = new AbortController()
  const r = await follow(['status-ok'], () => ctrlC.abort(), ctrlC.signal)
  t.equal(r.code, 130)
  t.match(r.stderr, /^cwo: interrupted\n$/)
})
