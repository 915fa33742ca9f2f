// deriveStatus on what the simulator's controllers and kubelet really write: a running workload is given a
// bad image with the real `kubectl set image`, the workload and its pods are read back through
// @kubernetes/client-node, and the derived status must turn `failed` with the pod's reason while the old
// pods still serve. Every wait is on watch events (a fresh read per event), never a sleep.
import { execFile, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { AppsV1Api, CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node'
import { startKubeSim } from '../kube-sim/index.ts'
import { deriveStatus, type DerivedStatus } from '../../src/kube/status/index.ts'
import { matchesSelector, podSelectorOf } from '../../src/kube/status/selector.ts'
import type { KubeObject } from '../../src/manifests/types.ts'

const probe = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' })
if (probe.error || probe.status !== 0) {
  t.plan(0, `kubectl not found on PATH (${probe.error?.message ?? probe.stderr}); kubectl set image cases skipped`)
} else {
  await cases()
}

type Kind = 'Deployment' | 'StatefulSet' | 'DaemonSet'
const PLURAL: Record<Kind, string> = { Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets' }

async function cases(): Promise<void> {
  const sim = await startKubeSim()
  const dir = mkdtempSync(join(tmpdir(), 'status-sim-'))
  t.teardown(async () => { await sim.close(); rmSync(dir, { recursive: true, force: true }) })
  const kc = new KubeConfig()
  kc.loadFromString(sim.kubeconfigYaml('token'))
  const apps = kc.makeApiClient(AppsV1Api)
  const core = kc.makeApiClient(CoreV1Api)
  const ns = 'default'

  const kubectl = (...args: string[]) => new Promise<void>((resolve, reject) => {
    // Asynchronous: the simulator runs in this process and must keep serving while kubectl waits.
    execFile('kubectl', ['--kubeconfig', sim.kubeconfigPath('token'), '--cache-dir', join(dir, 'cache'), '-n', ns, ...args], { timeout: 20_000 }, (err, _out, stderr) => (err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve()))
  })

  /** The workload and the pods its selector picks, read now through client-node, and what deriveStatus makes of them. */
  async function snapshot(kind: Kind, name: string): Promise<{ object: KubeObject; pods: V1Pod[]; derived: DerivedStatus }> {
    const o = kind === 'Deployment' ? await apps.readNamespacedDeployment({ name, namespace: ns })
      : kind === 'StatefulSet' ? await apps.readNamespacedStatefulSet({ name, namespace: ns })
        : await apps.readNamespacedDaemonSet({ name, namespace: ns })
    const object = { ...o, apiVersion: 'apps/v1', kind } as unknown as KubeObject
    const selector = podSelectorOf(kind, object.spec as Record<string, unknown>)!
    const pods = (await core.listNamespacedPod({ namespace: ns })).items.filter((p) => matchesSelector(p.metadata?.labels, selector))
    return { object, pods, derived: deriveStatus(object, { pods: pods as unknown as KubeObject[] }) }
  }

  /**
   * Resolves with the first snapshot that satisfies `done`, re-read after every watch event on the workload
   * kind and on pods (one read at a time; events during a read cause one more).
   */
  async function until(kind: Kind, name: string, what: string, done: (s: Awaited<ReturnType<typeof snapshot>>) => boolean, timeoutMs = 10_000) {
    const seen: string[] = []
    const watch = new Watch(kc)
    const aborts: AbortController[] = []
    try {
      return await new Promise<Awaited<ReturnType<typeof snapshot>>>((resolve, reject) => {
        let reading = false
        let again = false
        let settled = false
        const timer = setTimeout(() => { settled = true; reject(new Error(`timed out waiting for ${what}; derived so far: ${seen.join(' | ')}`)) }, timeoutMs)
        const check = async (): Promise<void> => {
          if (settled) return
          if (reading) { again = true; return }
          reading = true
          try {
            const s = await snapshot(kind, name)
            const line = `${s.derived.status}: ${s.derived.message}`
            if (seen.at(-1) !== line) seen.push(line)
            if (!settled && done(s)) { settled = true; clearTimeout(timer); resolve(s) }
          } catch (e) {
            settled = true; clearTimeout(timer); reject(e)
          } finally {
            reading = false
            if (again && !settled) { again = false; void check() }
          }
        }
        for (const path of [`/apis/apps/v1/namespaces/${ns}/${PLURAL[kind]}`, `/api/v1/namespaces/${ns}/pods`]) {
          watch.watch(path, {}, () => { void check() }, () => undefined).then((a) => { aborts.push(a); if (settled) a.abort() }, reject)
        }
        void check()
      })
    } finally {
      for (const a of aborts) a.abort()
    }
  }

  const tmpl = (app: string, image: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'web', image, ports: [{ containerPort: 80 }] }] } })

  t.test('Deployment: kubectl set image to a failing pull, then a crash loop, then undo', async (t) => {
    await apps.createNamespacedDeployment({ namespace: ns, body: { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: tmpl('web', 'nginx:1.27') } } })
    await until('Deployment', 'web', 'running 2/2', (s) => s.derived.status === 'running' && s.derived.ready === '2/2')

    const before = (await snapshot('Deployment', 'web')).object.metadata.generation as number
    await kubectl('set', 'image', 'deployment/web', 'web=nginx:fail-pull')
    // The controller observes a spec change at once, whatever its new pods do (as a real
    // kube-controller-manager does within milliseconds): by the time kubectl has its answer and exits, the
    // controller has run (it is queued behind the PATCH in this process), so the first read after it
    // already shows the new generation observed and never "waiting for the controller".
    const observed = await snapshot('Deployment', 'web')
    t.equal(observed.object.metadata.generation, before + 1)
    t.equal((observed.object.status as { observedGeneration?: number }).observedGeneration, before + 1, 'observed by the first read after kubectl set image')
    t.not(observed.derived.message, 'waiting for the controller to observe the new spec')

    const pulling = await until('Deployment', 'web', 'failed on the image pull', (s) => s.derived.status === 'failed')
    const newPod = pulling.pods.find((p) => p.spec?.containers[0].image === 'nginx:fail-pull')!
    t.ok(newPod, 'the new revision has a pod')
    t.equal(pulling.derived.ready, '2/2', 'the old replicas still serve')
    t.match(pulling.derived.message, new RegExp(`^rollout stuck: pod ${newPod.metadata!.name} container web: (ErrImagePull|ImagePullBackOff): .*"nginx:fail-pull".*; 2/2 old replicas still serve$`))
    t.match(pulling.pods.filter((p) => p.spec?.containers[0].image === 'nginx:1.27').length, 2, 'both old pods still there')

    await kubectl('set', 'image', 'deployment/web', 'web=nginx:crashloop')
    const crashing = await until('Deployment', 'web', 'failed on the crash loop', (s) => s.derived.status === 'failed' && s.derived.message.includes('CrashLoopBackOff'))
    const crashPod = crashing.pods.find((p) => p.spec?.containers[0].image === 'nginx:crashloop')!
    t.match(crashing.derived.message, new RegExp(`^rollout stuck: pod ${crashPod.metadata!.name} container web: CrashLoopBackOff: .*; 2/2 old replicas still serve$`))
    t.notMatch(crashing.derived.message, /fail-pull/, 'the abandoned revision\'s pod is not the new one')

    await kubectl('rollout', 'undo', 'deployment/web', '--to-revision=1')
    const back = await until('Deployment', 'web', 'running again after undo', (s) => s.derived.status === 'running')
    t.equal(back.derived.ready, '2/2')
  })

  t.test('StatefulSet: kubectl set image to a failing pull stops at the highest ordinal, failed', async (t) => {
    await apps.createNamespacedStatefulSet({ namespace: ns, body: { metadata: { name: 'db' }, spec: { replicas: 2, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: tmpl('db', 'nginx:1.27') } } })
    await until('StatefulSet', 'db', 'running 2/2', (s) => s.derived.status === 'running' && s.derived.ready === '2/2')
    await kubectl('set', 'image', 'statefulset/db', 'web=nginx:fail-pull')
    const s = await until('StatefulSet', 'db', 'failed on the image pull', (s) => s.derived.status === 'failed')
    t.match(s.derived.message, /^rollout stuck: pod db-1 container web: (ErrImagePull|ImagePullBackOff): .*; 1\/2 old replicas still serve$/)
  })

  t.test('DaemonSet: kubectl set image to a crash loop, failed while the other node\'s old pod serves', async (t) => {
    await apps.createNamespacedDaemonSet({ namespace: ns, body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: tmpl('agent', 'nginx:1.27') } } })
    await until('DaemonSet', 'agent', 'running 2/2', (s) => s.derived.status === 'running' && s.derived.ready === '2/2')
    await kubectl('set', 'image', 'daemonset/agent', 'web=nginx:crashloop')
    const s = await until('DaemonSet', 'agent', 'failed on the crash loop', (s) => s.derived.status === 'failed' && s.derived.message.includes('CrashLoopBackOff'))
    t.match(s.derived.message, /^rollout stuck: pod agent-\w+ container web: CrashLoopBackOff: .*; 1\/2 old replicas still serve$/)
  })
}
