// Objects belong to the workflow that made them, at the engine's level against the simulated cluster: an
// existing object of another workflow (or of nobody we know) is not changed unless adopted with permission,
// and prune/removal delete only what is still this workflow's, checked just before each delete.
import t from 'tap'
import { KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node'
import { ApiDiscovery } from '../../src/kube/api-discovery.ts'
import { APPLYSET_PART_OF_LABEL, applySetId, parentName, removeApplySets, type ApplySetContext } from '../../src/kube/applyset.ts'
import { deploy, FIELD_MANAGER, limiter, removeWorkflowObjects } from '../../src/kube/deploy.ts'
import { objectClient } from '../../src/kube/deploy-client.ts'
import { renderWorkflow } from '../../src/manifests/index.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, WORKFLOW_ID_ANNOTATION } from '../../src/manifests/metadata.ts'
import type { ManifestNode, RenderedObject } from '../../src/manifests/types.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { ctx as renderCtx, node } from '../manifests/canvas.ts'

const sim = await startTestCluster(t)
const kc = new KubeConfig()
kc.loadFromString(sim.kubeconfigYaml())
const client = KubernetesObjectApi.makeApiClient(kc)

type Svc = KubernetesObject & { spec: { ports: Array<{ port: number }> } }

/** A ConfigMap `settings` and a Service `web` (port as given) of workflow `wf` in `ns`. */
async function render(ns: string, wf: string, parts: Array<'cm' | 'svc'> = ['cm', 'svc'], port = 80): Promise<RenderedObject[]> {
  const all: Record<'cm' | 'svc', ManifestNode> = {
    cm: node('cm', 'configmap', { name: 'settings', namespace: ns, data: { A: wf } }),
    svc: node('svc', 'service', { name: 'web', namespace: ns, port, targetPort: 8080 }),
  }
  const r = await renderWorkflow({ nodes: parts.map((p) => all[p]), edges: [] }, renderCtx({ workflowId: wf }))
  if (r.diagnostics.some((d) => d.severity === 'error')) throw new Error(JSON.stringify(r.diagnostics))
  return r.objects
}

async function get<T = KubernetesObject>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | null> {
  return client.read({ apiVersion, kind, metadata: { name, ...(namespace && { namespace }) } }).then((o) => o as T, (err: { code?: number }) => {
    if (err.code === 404) return null
    throw err
  })
}

const svcOf = (r: Awaited<ReturnType<typeof deploy>>) => r.objects.find((o) => o.kind === 'Service')!

t.test('another workflow\'s object is not changed: the node fails naming that workflow; dry runs say the same', async (t) => {
  const ns = 'own-conflict'
  t.equal((await deploy(kc, await render(ns, 'wf-alice'), { workflowId: 'wf-alice' })).error, null)
  const before = await get<Svc>('v1', 'Service', 'web', ns)

  for (const dryRun of [false, true]) {
    const r = await deploy(kc, await render(ns, 'wf-dave', ['svc'], 81), { workflowId: 'wf-dave', dryRun })
    const svc = svcOf(r)
    t.equal(svc.action, 'failed', `dry run ${dryRun}: failed`)
    t.match(svc.message, /^conflict \(409\): Service web \(namespace own-conflict\) belongs to workflow wf-alice; not changed/)
    t.match(svc.message, /adopt: true/)
    t.same(r.pruned, [], 'nothing pruned after a failed node')
  }
  const after = await get<Svc>('v1', 'Service', 'web', ns)
  t.equal(after?.metadata?.resourceVersion, before?.metadata?.resourceVersion, 'the live object was not written')
  t.equal(after?.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION], 'wf-alice')
  t.same(after?.spec.ports.map((p) => p.port), [80])
  t.equal(after?.metadata?.labels?.[APPLYSET_PART_OF_LABEL], applySetId('wf-alice', ns), 'still in Alice\'s set')
})

t.test('adopt: refused without permission, then with it the object moves to the adopting workflow', async (t) => {
  const ns = 'own-adopt'
  await deploy(kc, await render(ns, 'wf-a1'), { workflowId: 'wf-a1' })
  const asked: Array<string | null> = []
  const refused = await deploy(kc, await render(ns, 'wf-b', ['svc'], 81), { workflowId: 'wf-b', adopt: true, mayAdopt: (o) => { asked.push(o); return false } })
  t.equal(svcOf(refused).action, 'failed')
  t.match(svcOf(refused).message, /adopt is allowed only for the owner of workflow wf-a1 or the cluster's owner/)
  t.same(asked, ['wf-a1'], 'asked about the other workflow by its id')
  t.equal((await get<Svc>('v1', 'Service', 'web', ns))?.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION], 'wf-a1')
  const failing = await deploy(kc, await render(ns, 'wf-b', ['svc'], 81), { workflowId: 'wf-b', adopt: true, mayAdopt: () => { throw new Error('database down') } })
  t.equal(svcOf(failing).action, 'failed', 'a permission check that fails refuses')

  const dry = await deploy(kc, await render(ns, 'wf-a2', ['svc'], 81), { workflowId: 'wf-a2', adopt: true, dryRun: true, mayAdopt: () => true })
  t.equal(svcOf(dry).action, 'configured')
  t.match(svcOf(dry).message, /^dry run: would be configured .*\(adopted from workflow wf-a1\)$/)
  t.equal((await get<Svc>('v1', 'Service', 'web', ns))?.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION], 'wf-a1', 'a dry run adopts nothing')

  const adopted = await deploy(kc, await render(ns, 'wf-a2', ['svc'], 81), { workflowId: 'wf-a2', adopt: true, mayAdopt: () => true })
  t.equal(svcOf(adopted).action, 'configured')
  t.match(svcOf(adopted).message, /^configured \(adopted from workflow wf-a1\)$/)
  const live = await get<Svc>('v1', 'Service', 'web', ns)
  t.equal(live?.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION], 'wf-a2')
  t.equal(live?.metadata?.labels?.[APPLYSET_PART_OF_LABEL], applySetId('wf-a2', ns), 'now a member of the adopter\'s set')
  t.same(live?.spec.ports.map((p) => p.port), [81])
  const rerun = await deploy(kc, await render(ns, 'wf-a2', ['svc'], 81), { workflowId: 'wf-a2' })
  t.equal(svcOf(rerun).action, 'unchanged', 'the adopter\'s next run needs no adopt')
  const back = await deploy(kc, await render(ns, 'wf-a1'), { workflowId: 'wf-a1' })
  t.equal(svcOf(back).action, 'failed', 'the first workflow no longer owns it')
  t.match(svcOf(back).message, /belongs to workflow wf-a2/)
})

t.test('prune and removal never delete an object another workflow took over', async (t) => {
  const ns = 'own-prune'
  await deploy(kc, await render(ns, 'wf-old'), { workflowId: 'wf-old' })
  await deploy(kc, await render(ns, 'wf-new', ['svc']), { workflowId: 'wf-new', adopt: true, mayAdopt: () => true })
  const pruned = await deploy(kc, await render(ns, 'wf-old', ['cm']), { workflowId: 'wf-old' })
  t.equal(pruned.error, null)
  t.same(pruned.pruned.filter((p) => p.action === 'deleted'), [], 'the service left wf-old\'s graph, but it is not wf-old\'s any more')
  t.ok(await get('v1', 'Service', 'web', ns), 'the service stays')
  const removed = await removeWorkflowObjects(kc, { workflowId: 'wf-old', namespaces: [ns] })
  t.same(removed.map((p) => [p.kind, p.name, p.action]), [['ConfigMap', 'settings', 'deleted']])
  t.ok(await get('v1', 'Service', 'web', ns), 'still there after wf-old is removed')
  t.equal((await get('v1', 'Service', 'web', ns))?.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION], 'wf-new')
})

t.test('a look-alike carrying every mark, written by hand (not by our apply), is kept', async (t) => {
  const ns = 'own-lookalike'
  const wf = 'wf-look'
  await deploy(kc, await render(ns, wf, ['cm']), { workflowId: wf })
  await client.create({
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'copy', namespace: ns, labels: { [APPLYSET_PART_OF_LABEL]: applySetId(wf, ns), [MANAGED_BY_LABEL]: MANAGED_BY }, annotations: { [WORKFLOW_ID_ANNOTATION]: wf } },
    spec: { ports: [{ port: 82 }] },
  } as KubernetesObject)
  const lines: string[] = []
  const removed = await removeWorkflowObjects(kc, { workflowId: wf, namespaces: [ns], log: (l) => lines.push(l) })
  // The parent records only ConfigMap; widen the look-alike's kind in by a run that has a Service too.
  t.same(removed.map((p) => [p.kind, p.action]), [['ConfigMap', 'deleted']])
  await deploy(kc, await render(ns, wf), { workflowId: wf })
  const again = await removeWorkflowObjects(kc, { workflowId: wf, namespaces: [ns], log: (l) => lines.push(l) })
  const copy = again.find((p) => p.name === 'copy')
  t.equal(copy?.action, 'kept')
  t.match(copy?.message, /annotation was last written by something other than this service's apply/)
  t.ok(await get('v1', 'Service', 'copy', ns), 'the look-alike stays')
  t.equal(await get('v1', 'Service', 'web', ns), null, 'our own service is deleted')
  t.ok(lines.some((l) => /Service copy \(own-lookalike\): kept/.test(l)), 'logged')
})

t.test('a takeover that lands between the check and the delete: the precondition fails, the object is kept', async (t) => {
  const ns = 'own-race'
  const wf = 'wf-race'
  await deploy(kc, await render(ns, wf), { workflowId: wf })
  const oc = await objectClient(kc)
  t.teardown(() => oc.close())
  // The object changes hands right after our read answers: another workflow adopts it (same field manager,
  // as every user of the service shares it), rewriting the annotation and the set label.
  const read = oc.api.read.bind(oc.api)
  let raced = false
  oc.api.read = (async (...args: Parameters<typeof read>) => {
    const answer = await read(...args)
    if (!raced && args[0].kind === 'Service' && args[0].metadata?.name === 'web') {
      raced = true
      const taken = await deploy(kc, await render(ns, 'wf-thief', ['svc']), { workflowId: 'wf-thief', adopt: true, mayAdopt: () => true })
      if (svcOf(taken).action !== 'configured') throw new Error(`takeover: ${svcOf(taken).message}`)
    }
    return answer
  }) as typeof oc.api.read
  const lines: string[] = []
  const ctx: ApplySetContext = { client: oc, discovery: new ApiDiscovery(oc), workflowId: wf, fieldManager: FIELD_MANAGER, schedule: limiter(4), log: (l) => lines.push(l) }
  const removed = await removeApplySets(ctx, [ns])
  t.ok(raced, 'the takeover happened after the read')
  const svc = removed.find((p) => p.kind === 'Service')
  t.equal(svc?.action, 'kept', svc?.message ?? 'no result for the Service')
  t.match(svc?.message, /now belongs to workflow wf-thief/)
  t.equal((await get('v1', 'Service', 'web', ns))?.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION], 'wf-thief', 'the taken-over service stays')
  t.equal(await get('v1', 'ConfigMap', 'settings', ns), null, 'the rest of the set is deleted')
})

t.test('a ConfigMap of another owner where the ApplySet record goes: the namespace\'s objects fail, nothing is written', async (t) => {
  const ns = 'own-parent'
  const wf = 'wf-parent'
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } as KubernetesObject)
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: parentName(wf), namespace: ns }, data: { mine: 'yes' } } as KubernetesObject)
  const r = await deploy(kc, await render(ns, wf), { workflowId: wf })
  for (const o of r.objects.filter((x) => x.kind !== 'Namespace')) {
    t.equal(o.action, 'failed', `${o.kind} failed`)
    t.match(o.message, /ApplySet record, was not made by this service; not changed/)
  }
  const taken = await get<KubernetesObject & { data?: Record<string, string> }>('v1', 'ConfigMap', parentName(wf), ns)
  t.same(taken?.data, { mine: 'yes' })
  t.equal(taken?.metadata?.labels?.[MANAGED_BY_LABEL], undefined, 'not relabelled')
  t.equal(await get('v1', 'Service', 'web', ns), null)
})

t.test('a hostile workflow annotation on a live object (newlines, 200 KiB) gives one short line naming it quoted', async (t) => {
  const ns = 'own-hostile'
  const hostile = `wf-evil\n${'x'.repeat(200 * 1024)}`
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } as KubernetesObject)
  await client.create({
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'web', namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, annotations: { [WORKFLOW_ID_ANNOTATION]: hostile } },
    spec: { ports: [{ port: 80 }] },
  } as KubernetesObject)
  const asked: Array<string | null> = []
  for (const adopt of [false, true]) {
    const r = await deploy(kc, await render(ns, 'wf-calm', ['svc']), { workflowId: 'wf-calm', adopt, mayAdopt: (o) => { asked.push(o); return false } })
    const message = svcOf(r).message
    t.equal(svcOf(r).action, 'failed')
    t.match(message, /belongs to workflow "wf-evil\\nx{56}"…/, 'quoted and cut')
    t.notMatch(message, /\n/)
    t.ok(message.length < 400, `short: ${message.length} characters`)
  }
  t.same(asked, [hostile], 'the permission check gets the id as it is (and finds no such workflow)')
})
