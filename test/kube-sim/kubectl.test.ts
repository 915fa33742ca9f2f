// Conformance as kubectl sees it: the real binary against the simulator. Skipped (with the reason)
// when kubectl is not on the PATH.
import { execFile, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startKubeSim } from './index.ts'
import { waitFor } from './test-helpers.ts'

const probe = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' })
if (probe.error || probe.status !== 0) {
  t.plan(0, `kubectl not found on PATH (${probe.error?.message ?? probe.stderr}); kubectl conformance skipped`)
} else {
  await conformance()
}

async function conformance(): Promise<void> {
  const sim = await startKubeSim()
  const dir = mkdtempSync(join(tmpdir(), 'kube-sim-kubectl-'))
  t.teardown(async () => { await sim.close(); rmSync(dir, { recursive: true, force: true }) })
  const kubeconfig = sim.kubeconfigPath('token')
  // A private discovery cache: kubectl must not reuse another run's (ports get reused).
  const base = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache')]

  // Always asynchronous: the simulator runs in this process and must keep serving while kubectl waits.
  const k = (args: string[], input?: string) => new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile('kubectl', [...base, ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr })
    })
    if (input !== undefined) child.stdin!.end(input)
  })
  const stream = (args: string[]) => {
    const child = spawn('kubectl', [...base, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => { out += c.toString() })
    child.stderr.on('data', (c: Buffer) => { out += c.toString() })
    return { child, output: () => out, stop: () => new Promise<void>((r) => { if (child.exitCode !== null) r(); else { child.on('exit', () => r()); child.kill() } }) }
  }
  const file = (name: string, text: string) => { const p = join(dir, name); writeFileSync(p, text); return p }

  const app = file('app.yaml', `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.27", ports: [{containerPort: 80}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
`)

  t.test('get nodes (the CLI smoke test)', async (t) => {
    const r = await k(['get', 'nodes'])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION/)
    t.equal(r.stdout.split('\n').filter((l) => /\sReady\s/.test(l)).length, 2)
  })

  t.test('apply --server-side, rollout status, get -o json', async (t) => {
    const r = await k(['apply', '--server-side', '-f', app])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /deployment.apps\/web serverside-applied/)
    t.match(r.stdout, /service\/web serverside-applied/)
    const rollout = await k(['rollout', 'status', 'deployment/web', '--timeout=20s'])
    t.equal(rollout.code, 0, rollout.stderr)
    t.match(rollout.stdout, /successfully rolled out/)
    const json = JSON.parse((await k(['get', 'deployment', 'web', '-o', 'json'])).stdout)
    t.match(json, { kind: 'Deployment', spec: { replicas: 2 }, status: { readyReplicas: 2, updatedReplicas: 2 } })
    const conflict = await k(['apply', '--server-side', '--field-manager', 'someone-else', '-f', file('scaled.yaml', (await import('node:fs')).readFileSync(app, 'utf8').replace('replicas: 2', 'replicas: 3'))])
    t.not(conflict.code, 0, 'another field manager conflicts')
    t.match(conflict.stderr, /conflict with "kubectl"/)
  })

  t.test('get -w sees a change', async (t) => {
    const w = stream(['get', 'configmaps', '-w'])
    await waitFor('watch header', () => /NAME\s+DATA\s+AGE/.test(w.output()))
    const created = await k(['create', 'configmap', 'seen-by-watch', '--from-literal=a=b'])
    t.equal(created.code, 0, created.stderr)
    await waitFor('watch line for the new configmap', () => /seen-by-watch\s+1\s/.test(w.output()))
    await w.stop()
    t.pass('watch printed the new object')
  })

  t.test('logs -f follows', async (t) => {
    const pods = JSON.parse((await k(['get', 'pods', '-l', 'app=web', '-o', 'json'])).stdout).items as { metadata: { name: string } }[]
    t.ok(pods.length >= 1)
    const f = stream(['logs', '-f', '--tail=1', pods[0].metadata.name])
    const lines = await waitFor('three followed log lines', () => { const l = f.output().split('\n').filter(Boolean); return l.length >= 3 && l })
    await f.stop()
    const nums = lines.slice(0, 3).map((l) => Number(/heartbeat (\d+)$/.exec(l)?.[1]))
    t.same(nums, [nums[0], nums[0] + 1, nums[0] + 2], `consecutive lines: ${lines.join(' | ')}`)
  })

  t.test('exec runs a command and returns its exit code', async (t) => {
    const pod = JSON.parse((await k(['get', 'pods', '-l', 'app=web', '-o', 'json'])).stdout).items[0].metadata.name as string
    const hi = await k(['exec', pod, '--', 'echo', 'hi'])
    t.equal(hi.code, 0, hi.stderr)
    t.equal(hi.stdout, 'hi\n')
    const failed = await k(['exec', pod, '--', 'sh', '-c', 'echo bye; exit 7'])
    t.equal(failed.code, 7, 'kubectl exits with the command exit code')
    t.equal(failed.stdout, 'bye\n')
    const stdin = await k(['exec', '-i', pod, '--', 'sh'], 'echo piped; hostname\n')
    t.equal(stdin.stdout, `piped\n${pod}\n`)
  })

  t.test('top pods', async (t) => {
    const r = await k(['top', 'pods'])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/)
    t.match(r.stdout, /web-\S+\s+\d+m\s+\d+Mi/)
  })

  t.test('api-resources lists a CRD kind once it exists', async (t) => {
    const before = await k(['api-resources'])
    t.equal(before.code, 0, before.stderr)
    t.notMatch(before.stdout, /Gadget/)
    const crd = file('crd.yaml', `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd]}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`)
    t.equal((await k(['apply', '--server-side', '-f', crd])).code, 0)
    const after = await k(['api-resources', '--api-group=example.com'])
    t.match(after.stdout, /gadgets\s+gd\s+example.com\/v1\s+true\s+Gadget/)
    const cr = await k(['apply', '--server-side', '-f', '-'], 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {size: 1}\n')
    t.equal(cr.code, 0, cr.stderr)
    t.match((await k(['get', 'gd'])).stdout, /g1/)
  })

  t.test('delete cascades through ownerReferences', async (t) => {
    const r = await k(['delete', 'deployment', 'web'])
    t.equal(r.code, 0, r.stderr)
    await waitFor('replicasets and pods of web to go', async () => (await k(['get', 'replicasets,pods', '-l', 'app=web', '-o', 'name'])).stdout.trim() === '')
    t.pass('dependents were garbage collected')
  })

  t.test('client certificate and namespace creation (protobuf bodies)', async (t) => {
    const certCfg = sim.kubeconfigPath('cert')
    const who = await new Promise<string>((resolve) => execFile('kubectl', ['--kubeconfig', certCfg, '--cache-dir', join(dir, 'cache'), 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], (_e, out) => resolve(out)))
    t.equal(who, 'kube-sim-cert-admin')
    t.equal((await k(['create', 'namespace', 'team-a'])).code, 0)
    t.match((await k(['get', 'ns', 'team-a', '-o', 'jsonpath={.status.phase}'])).stdout, 'Active')
  })
}
