// cwo run against the live service and the simulator. The server answers 202 at once (RUN_REPLY_WAIT_MS 0),
// so --wait really follows the run over the event stream; a node whose image cannot be pulled fails the run
// fast (the simulator fails any image named *fail-pull*), one that never becomes ready outlasts --timeout.
import t from 'tap'
import { startCliWorld } from './harness.ts'
import { deployment, liveImage, node, runFinished, workflow } from './runs-fixture.ts'
import { raw } from '../kube-sim/test-helpers.ts'
import { apiClient } from '../../src/cli/client.ts'
import { waitForRun } from '../../src/cli/runs/wait.ts'

const w = await startCliWorld(t, { timing: { podStartMs: 5, podReadyMs: 5 } }, { RUN_REPLY_WAIT_MS: 0, RUN_READY_TIMEOUT_MS: 1000 })

t.test('run --wait follows the run to its end: each object\'s outcome, then completed, exit 0; the cluster has it', async (t) => {
  await workflow(w, 'shop', [deployment('cli-run', 'nginx:1.25'), { id: 'conf', type: 'configmap', position: { x: 0, y: 0 }, data: { name: 'web-conf', namespace: 'cli-run', data: { MODE: 'a' } } }])
  const r = await w.cwo(['run', 'shop', '--wait'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, /run \w+ (pending|running); waiting for its end/, 'the server answered before the end: cwo waited')
  t.match(r.stderr, /^ {2}Deployment of node web: created, /m, 'progress on stderr while waiting')
  t.match(r.stdout, /^Deployment\/web \(cli-run\): created/m)
  t.match(r.stdout, /^ConfigMap\/web-conf \(cli-run\): created/m)
  t.match(r.stdout, /^run \w+ completed \(version 1 on sim/m)
  t.equal(await liveImage(w, 'cli-run'), 'nginx:1.25', 'the Deployment is on the cluster')
})

t.test('run --wait -o json prints the final run record whole', async (t) => {
  const r = await w.cwo(['run', 'shop', '--wait', '-o', 'json'])
  t.equal(r.code, 0, r.stderr)
  const run = JSON.parse(r.stdout)
  t.match(run, { status: 'completed', version: 2, dry_run: false, error: null })
  t.same(run.nodes.map((n: { kind: string; action: string }) => [n.kind, n.action]).sort(), [['ConfigMap', 'unchanged'], ['Deployment', 'unchanged'], ['Namespace', 'unchanged']])
})

t.test('without --wait: the run\'s id and status, exit 0 while it runs', async (t) => {
  const id = await workflow(w, 'nowait', [deployment('cli-nowait', 'nginx:1.25')])
  const finished = runFinished(w, id)
  const r = await w.cwo(['run', id, '-o', 'json'])
  t.equal(r.code, 0, r.stderr)
  t.match(JSON.parse(r.stdout), { workflow_id: id, status: /pending|running/ })
  t.match(r.stderr, /cwo status \w+ -w follows it/)
  await finished
})

t.test('a node that cannot start fails the run: its outcome on stdout, the run\'s error on stderr, exit 3', async (t) => {
  await workflow(w, 'broken', [deployment('cli-fail', 'acme/fail-pull:1')])
  const r = await w.cwo(['run', 'broken', '--wait'])
  t.equal(r.code, 3, r.stderr)
  t.match(r.stdout, /^Deployment\/web \(cli-fail\): failed, .+/m)
  t.match(r.stdout, /^run \w+ failed/m)
  t.match(r.stderr, /^cwo: run \w+ failed: .*Deployment web/m)
})

t.test('the real binary exits 3 for a failed run --wait', async (t) => {
  const r = await w.cwoProcess(['run', 'broken', '--wait'])
  t.equal(r.code, 3, r.stderr)
  t.match(r.stderr, /cwo: run \w+ failed/)
})

t.test('--timeout ends the wait with exit 3 and says the run goes on', async (t) => {
  const id = await workflow(w, 'slow', [deployment('cli-slow', 'acme/never-ready:1')])
  const finished = runFinished(w, id)
  const r = await w.cwo(['run', 'slow', '--wait', '--timeout', '0.3'])
  t.equal(r.code, 3, r.stderr)
  t.match(r.stderr, /timed out waiting for run \w+; it goes on on the server \(cwo status slow -w follows it\)/)
  t.equal(r.stdout, '')
  await finished
})

t.test('--dry-run changes nothing and prints what a run would do', async (t) => {
  await workflow(w, 'preview', [deployment('cli-dry', 'nginx:1.25')])
  const r = await w.cwo(['run', 'preview', '--dry-run', '--wait'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^Deployment\/web \(cli-dry\): created\n {2}\+ /m)
  t.match(r.stdout, /^dry run \w+ completed/m)
  t.equal(await liveImage(w, 'cli-dry'), null, 'nothing on the cluster')
})

t.test('--env and --secret become the run\'s trigger data; a malformed one is a usage error', async (t) => {
  const bad = await w.cwo(['run', 'shop', '--env', 'NOSLASH=1'])
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--env "NOSLASH": expected node\/KEY=VALUE/)
  const unset = await w.cwo(['run', 'shop', '--secret', 'web/UNSET_FOR_TEST'], { env: { UNSET_FOR_TEST: undefined } })
  t.equal(unset.code, 2)
  t.match(unset.stderr, /\$UNSET_FOR_TEST is not set/)
  const r = await w.cwo(['run', 'shop', '--wait', '--env', 'web/GREETING=hello'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^Deployment\/web \(cli-run\): configured/m, 'the env var changed the Deployment')
})

t.test('--secret node/KEY without a value reads $KEY: the value reaches the cluster and never the output', async (t) => {
  const value = 'cli-secret-5d1e7a'
  await workflow(w, 'creds', [node('creds', 'secret', { name: 'api-creds', namespace: 'cli-secret', secretType: 'Opaque', keys: ['API_TOKEN'] })])
  const r = await w.cwo(['run', 'creds', '--wait', '--secret', 'creds/API_TOKEN', '-o', 'json'], { env: { API_TOKEN: value } })
  t.equal(r.code, 0, r.stderr)
  const secret = await raw(w.sim, 'GET', '/api/v1/namespaces/cli-secret/secrets/api-creds')
  t.equal(Buffer.from(secret.json.data.API_TOKEN, 'base64').toString(), value)
  t.notMatch(r.stdout + r.stderr, value)
})

t.test('an unknown workflow is the API\'s 404, exit 1', async (t) => {
  const r = await w.cwo(['run', 'no-such-workflow', '--wait'])
  t.equal(r.code, 1)
  t.match(r.stderr, /^cwo: 404: /)
})

t.test('waiting for a run that ended before the stream opened reads its end from the record, not from a missed event', async (t) => {
  const id = await workflow(w, 'ended', [deployment('cli-ended', 'nginx:1.25')])
  const finished = runFinished(w, id)
  const res = await w.app.app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/run`, headers: w.user.headers, payload: {} })
  t.equal(res.statusCode, 202)
  await finished
  const session = { server: w.server, token: w.user.token, client: apiClient(w.server, w.user.token) }
  // No poll within the deadline: only the read at the stream's opening can end this wait in time.
  const run = await waitForRun(session, id, res.json().id, { signal: new AbortController().signal, deadline: Date.now() + 5000, pollMs: 60_000 })
  t.match(run, { id: res.json().id, status: 'completed' })
})

t.test('a wait whose stream cannot be opened falls back to reading the run record until the run ends', async (t) => {
  const id = await workflow(w, 'no-stream', [deployment('cli-nostream', 'nginx:1.25')])
  const res = await w.app.app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/run`, headers: w.user.headers, payload: {} })
  t.equal(res.statusCode, 202)
  // The stream's URL answers 404 (a path the API does not have); the record is read from the real client.
  const session = { server: `${w.server}/no-such-prefix`, token: w.user.token, client: apiClient(w.server, w.user.token) }
  const run = await waitForRun(session, id, res.json().id, { signal: new AbortController().signal, deadline: Date.now() + 10_000, pollMs: 50 })
  t.match(run, { id: res.json().id, status: 'completed' })
})
