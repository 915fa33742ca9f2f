// cwo diff, sync and rollback against the live service and the simulator: a dry run's differences before the
// first run, none after it, the field someone changed behind the service's back (a merge patch as kubectl
// scale sends it, straight to the simulator) both as a diff and as drift, sync taking it back, and a rollback
// from v2 to v1 (its dry run first, which changes nothing).
import t from 'tap'
import { raw } from '../kube-sim/test-helpers.ts'
import { startCliWorld } from './harness.ts'
import { diffText } from '../../src/cli/runs/print.ts'
import { deployment, liveImage, saveGraph, workflow } from './runs-fixture.ts'

const w = await startCliWorld(t, { timing: { podStartMs: 5, podReadyMs: 5 } }, { RUN_REPLY_WAIT_MS: 0, RUN_READY_TIMEOUT_MS: 1500 })
const NS = 'cli-diff'
const id = await workflow(w, 'drifty', [deployment(NS, 'nginx:1.25')])
const replicas = async () => (await raw(w.sim, 'GET', `/apis/apps/v1/namespaces/${NS}/deployments/web`)).json.spec.replicas as number

t.test('before the first run: every object would be created, exit 4, and the dry run changed nothing', async (t) => {
  const r = await w.cwo(['diff', 'drifty'])
  t.equal(r.code, 4, r.stderr)
  t.match(r.stdout, /^Namespace\/cli-diff: created$/m)
  t.match(r.stdout, /^Deployment\/web \(cli-diff\): created\n(  \+ .+\n)*  \+ spec\.template\.spec\.containers\[name=web\]\.image: nginx:1\.25\n/m)
  t.match(r.stderr, /^cwo: 2 objects would change$/m)
  t.equal(await liveImage(w, NS), null, 'nothing on the cluster')
})

t.test('after a run: nothing would change, exit 0, empty stdout; no drift either', async (t) => {
  const run = await w.cwo(['run', 'drifty', '--wait'])
  t.equal(run.code, 0, run.stderr)
  const r = await w.cwo(['diff', 'drifty'])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout, '')
  t.match(r.stderr, /no differences: a run would change nothing \(2 objects compared\)/)
  const drift = await w.cwo(['diff', 'drifty', '--drift'])
  t.equal(drift.code, 0, drift.stderr)
  t.match(drift.stderr, /no drift/)
})

t.test('a field changed behind the service\'s back: diff and --drift show it, exit 4; sync takes it back', async (t) => {
  const patched = await raw(w.sim, 'PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/web?fieldManager=kubectl-scale`, { body: { spec: { replicas: 3 } }, contentType: 'application/merge-patch+json' })
  t.equal(patched.status, 200, patched.text.slice(0, 200))
  const r = await w.cwo(['diff', 'drifty'])
  t.equal(r.code, 4, r.stderr)
  t.equal(r.stdout, 'Deployment/web (cli-diff): configured\n  ~ spec.replicas\n    - 3\n    + 1\n', 'the run would take the replicas back')
  const drift = await w.cwo(['diff', 'drifty', '--drift'])
  t.equal(drift.code, 4, drift.stderr)
  t.equal(drift.stdout, 'Deployment/web (cli-diff): drifted\n  ~ spec.replicas\n    - 1\n    + 3\n', 'applied 1, live 3')
  const json = await w.cwo(['diff', 'drifty', '--drift', '-o', 'json'])
  t.equal(json.code, 4)
  t.match(JSON.parse(json.stdout), { nodes: [{ node_id: 'web', objects: [{ kind: 'Deployment', fields: [{ path: 'spec.replicas', applied: 1, live: 3 }] }] }] })

  const plain = await w.cwo(['diff', 'drifty', '--no-force'])
  t.equal(plain.code, 1, 'as a plain run would: the field another manager owns is a conflict')
  t.match(plain.stdout, /^Deployment\/web \(cli-diff\): failed, .*kubectl-scale/m)
  t.match(plain.stderr, /^cwo: dry run \w+ failed: /m)

  const sync = await w.cwo(['sync', 'drifty', '--wait'])
  t.equal(sync.code, 0, sync.stderr)
  t.match(sync.stdout, /^sync run \w+ completed/m)
  t.equal(await replicas(), 1, 'the cluster runs one replica again')
  t.equal((await w.cwo(['diff', 'drifty'])).code, 0, 'nothing differs after the sync')
  t.equal((await w.cwo(['diff', 'drifty', '--drift'])).code, 0, 'no drift after the sync')
})

t.test('rollback --dry-run shows the graph changes and the image going back, and changes nothing', async (t) => {
  await saveGraph(w, id, [deployment(NS, 'nginx:1.27')])
  const v2 = await w.cwo(['run', 'drifty', '--wait', '-o', 'json'])
  t.equal(v2.code, 0, v2.stderr)
  t.equal(JSON.parse(v2.stdout).version, 2, 'the sync recorded no version')
  t.equal(await liveImage(w, NS), 'nginx:1.27')
  const r = await w.cwo(['rollback', 'drifty', '1', '--dry-run'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^graph changes, to version 1:\n {2}~ node web \(deployment\)\n {6}\/data\/image: nginx:1\.27 -> nginx:1\.25\n/)
  t.match(r.stdout, /^Deployment\/web \(cli-diff\): configured\n {2}~ spec\.template\.spec\.containers\[name=web\]\.image\n {4}- nginx:1\.27\n {4}\+ nginx:1\.25\n/m)
  t.match(r.stdout, /^dry run \w+ completed \(version 1 on sim/m)
  t.equal(await liveImage(w, NS), 'nginx:1.27', 'the cluster still runs v2')
  const versions = await w.app.app.inject({ method: 'GET', url: `/v1/api/workflows/${id}/versions`, headers: w.user.headers })
  t.equal(versions.json().total, 2, 'no version recorded')
})

t.test('rollback VERSION --wait restores v1 as a new version and the cluster runs its image; -o json is {run, changes}', async (t) => {
  const r = await w.cwo(['rollback', 'drifty', '1', '--wait', '-o', 'json'])
  t.equal(r.code, 0, r.stderr)
  const { run, changes } = JSON.parse(r.stdout)
  t.match(run, { status: 'completed', trigger: 'rollback', rollback_of: 1, version: 3, dry_run: false })
  t.match(changes, { to_version: 1, modified_nodes: [{ node_id: 'web', changes: [{ path: '/data/image', old: 'nginx:1.27', new: 'nginx:1.25' }] }] })
  t.equal(await liveImage(w, NS), 'nginx:1.25', 'the cluster runs v1\'s image')
  t.equal((await w.cwo(['diff', 'drifty'])).code, 0, 'the workflow is v1\'s graph, as deployed')
})

t.test('refusals: a version that does not exist is the API\'s 404 (exit 1); a version that is not a number is a usage error', async (t) => {
  const missing = await w.cwo(['rollback', 'drifty', '99'])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /^cwo: 404: /)
  const bad = await w.cwo(['rollback', 'drifty', 'latest'])
  t.equal(bad.code, 2)
  t.match(bad.stderr, /a version number/)
  const drift = await w.cwo(['diff', 'drifty', '--drift', '--cluster', 'sim'])
  t.equal(drift.code, 2)
})

t.test('values from the cluster cannot drive the terminal: control characters are printed escaped', async (t) => {
  const text = diffText([{ node_id: 'web', kind: 'Deployment', name: 'web', namespace: NS, action: 'configured', message: '', diff: { changed: [{ path: 'metadata.labels.x', old: '\u001b[2J\u001b[31mred', new: 'two\nlines\u009b31m' }], added: [], removed: [] } }])
  t.equal(text, 'Deployment/web (cli-diff): configured\n  ~ metadata.labels.x\n    - \\u001b[2J\\u001b[31mred\n    + two\\nlines\\u009b31m\n')
  t.notMatch(text, /[\u001b\u009b]/)
})
