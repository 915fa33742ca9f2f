// ApplySet bookkeeping against the simulated cluster: the parent and member labels as KEP-3659 / kubectl define
// them, prune bounded by the recorded set and by our own marks, and removal of a deleted workflow's objects.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import t from 'tap'
import { KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node'
import { APPLYSET_GROUP_KINDS_ANNOTATION, APPLYSET_ID_LABEL, APPLYSET_PART_OF_LABEL, APPLYSET_TOOLING_ANNOTATION, applySetId, parentName } from '../../src/kube/applyset.ts'
import { deploy, removeWorkflowObjects } from '../../src/kube/deploy.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, WORKFLOW_ID_ANNOTATION } from '../../src/manifests/metadata.ts'
import { renderWorkflow } from '../../src/manifests/index.ts'
import type { ManifestNode, RenderedObject } from '../../src/manifests/types.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { ctx, edge, node } from '../manifests/canvas.ts'

const sim = await startTestCluster(t)
const kc = new KubeConfig()
kc.loadFromString(sim.kubeconfigYaml())
const client = KubernetesObjectApi.makeApiClient(kc)
const run = promisify(execFile)
const kubectl = await run('kubectl', ['version', '--client']).then(() => true, () => false)

type Part = 'cm' | 'sec' | 'dep' | 'svc'
async function render(ns: string, workflowId: string, parts: Part[] = ['cm', 'sec', 'dep', 'svc']): Promise<RenderedObject[]> {
  const all: Record<Part, ManifestNode> = {
    cm: node('cm', 'configmap', { name: 'web-config', namespace: ns, data: { A: '1' } }),
    sec: node('sec', 'secret', { name: 'web-secret', namespace: ns, secretType: 'Opaque', keys: ['TOKEN'] }),
    dep: node('dep', 'deployment', { name: 'web', namespace: ns, image: 'nginx:1.27', port: 8080 }),
    svc: node('svc', 'service', { name: 'web', namespace: ns, port: 80, targetPort: 8080 }),
  }
  const nodes = parts.map((p) => all[p])
  const edges = [edge('cm', 'dep'), edge('sec', 'dep'), edge('dep', 'svc')].filter((e) => parts.includes(e.source as Part) && parts.includes(e.target as Part))
  const r = await renderWorkflow({ nodes, edges }, ctx({ workflowId, revealSecrets: true, secrets: { sec: { TOKEN: 'x' } } }))
  if (r.diagnostics.some((d) => d.severity === 'error')) throw new Error(JSON.stringify(r.diagnostics))
  return r.objects
}

async function get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<KubernetesObject | null> {
  return client.read({ apiVersion, kind, metadata: { name, ...(namespace && { namespace }) } }).then((o) => o, (err: { code?: number }) => {
    if (err.code === 404) return null
    throw err
  })
}

/** Gone, or going (the simulator may keep an object with finalizers briefly). */
async function gone(apiVersion: string, kind: string, name: string, namespace: string): Promise<boolean> {
  return waitFor(`${kind} ${name} deleted`, async () => {
    const o = await get(apiVersion, kind, name, namespace)
    return o === null || o.metadata?.deletionTimestamp !== undefined
  }, 5000).then(() => true, () => false)
}

t.test('the ApplySet id, parent and member labels follow KEP-3659', async (t) => {
  const ns = 'set-labels'
  const wf = 'wf-labels'
  const expected = `applyset-${createHash('sha256').update(`${parentName(wf)}.${ns}.ConfigMap.`).digest('base64url')}-v1`
  t.equal(applySetId(wf, ns), expected)
  t.match(expected, /^applyset-[A-Za-z0-9_-]{43}-v1$/, 'base64url without padding, as kubectl computes it')

  const r = await deploy(kc, await render(ns, wf), { workflowId: wf })
  t.equal(r.error, null)
  const parent = await get('v1', 'ConfigMap', parentName(wf), ns)
  t.ok(parent, 'the parent ConfigMap exists in the namespace')
  t.equal(parent?.metadata?.labels?.[APPLYSET_ID_LABEL], expected)
  t.equal(parent?.metadata?.annotations?.[APPLYSET_GROUP_KINDS_ANNOTATION], 'ConfigMap,Deployment.apps,Secret,Service')
  t.match(parent?.metadata?.annotations?.[APPLYSET_TOOLING_ANNOTATION], /^[a-z0-9-]+\/v\d+$/)
  t.equal(parent?.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION], wf)
  for (const o of r.objects) {
    if (o.kind === 'Namespace') t.equal(o.labels[APPLYSET_PART_OF_LABEL], undefined, 'a Namespace is not a member (never pruned)')
    else t.equal(o.labels[APPLYSET_PART_OF_LABEL], expected, `${o.kind} carries the part-of label`)
  }

  if (!kubectl) { t.comment('kubectl is not on the PATH: the kubectl view is not checked'); return }
  const { stdout } = await run('kubectl', ['--kubeconfig', sim.kubeconfigPath(), 'get', 'configmaps,secrets,deployments,services', '-n', ns, '-l', `${APPLYSET_PART_OF_LABEL}=${expected}`, '-o', 'name'])
  t.same(stdout.trim().split('\n').sort(), ['configmap/web-config', 'deployment.apps/web', 'secret/web-secret', 'service/web'], 'kubectl lists exactly the members by the part-of label')
})

t.test('prune deletes what left the graph, and never an object without our marks or of another workflow', async (t) => {
  const ns = 'set-prune'
  const wf = 'wf-prune'
  const id = applySetId(wf, ns)
  await deploy(kc, await render(ns, wf), { workflowId: wf })
  // Look-alikes: the part-of label alone; our labels but another workflow's annotation.
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'copied-label', namespace: ns, labels: { [APPLYSET_PART_OF_LABEL]: id } } } as KubernetesObject)
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other-workflow', namespace: ns, labels: { [APPLYSET_PART_OF_LABEL]: id, [MANAGED_BY_LABEL]: MANAGED_BY }, annotations: { [WORKFLOW_ID_ANNOTATION]: 'wf-someone-else' } } } as KubernetesObject)
  await client.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'unlabelled', namespace: ns }, spec: { ports: [{ port: 81 }] } } as KubernetesObject)

  const kept = await deploy(kc, await render(ns, wf, ['cm', 'sec', 'dep']), { workflowId: wf, prune: false })
  t.same(kept.pruned, [], 'prune: false deletes nothing')
  t.ok(await get('v1', 'Service', 'web', ns), 'the dropped service is still there')

  const r = await deploy(kc, await render(ns, wf, ['cm', 'sec', 'dep']), { workflowId: wf })
  t.same(r.pruned.map((p) => [p.kind, p.name, p.namespace, p.action]), [['Service', 'web', ns, 'deleted']])
  t.match(r.pruned[0].message, /no longer in the workflow/)
  t.ok(await gone('v1', 'Service', 'web', ns), 'the dropped service is gone')
  for (const [kind, name] of [['ConfigMap', 'copied-label'], ['ConfigMap', 'other-workflow'], ['Service', 'unlabelled'], ['ConfigMap', 'web-config'], ['Secret', 'web-secret']]) {
    t.ok(await get('v1', kind, name, ns), `${kind} ${name} untouched`)
  }
  t.ok(await get('apps/v1', 'Deployment', 'web', ns))
  const parent = await get('v1', 'ConfigMap', parentName(wf), ns)
  t.equal(parent?.metadata?.annotations?.[APPLYSET_GROUP_KINDS_ANNOTATION], 'ConfigMap,Deployment.apps,Secret', 'the parent now records only the current kinds')
})

t.test('a run with a failed object prunes nothing', async (t) => {
  const ns = 'set-failed'
  const wf = 'wf-failed'
  await deploy(kc, await render(ns, wf), { workflowId: wf })
  sim.faults.failNext(1, 500, { pathPrefix: `/api/v1/namespaces/${ns}/configmaps/web-config`, method: 'PATCH' })
  const r = await deploy(kc, await render(ns, wf, ['cm', 'dep']), { workflowId: wf })
  t.equal(r.objects.find((o) => o.kind === 'ConfigMap')?.action, 'failed')
  t.same(r.pruned, [])
  t.ok(await get('v1', 'Secret', 'web-secret', ns), 'the dropped secret stays until a run succeeds')
  t.ok(await get('v1', 'Service', 'web', ns))
  const parent = await get('v1', 'ConfigMap', parentName(wf), ns)
  t.equal(parent?.metadata?.annotations?.[APPLYSET_GROUP_KINDS_ANNOTATION], 'ConfigMap,Deployment.apps,Secret,Service', 'the recorded kinds keep the dropped ones for the next prune')
  const ok = await deploy(kc, await render(ns, wf, ['cm', 'dep']), { workflowId: wf })
  t.same(ok.pruned.map((p) => p.kind).sort(), ['Secret', 'Service'], 'the next successful run prunes them')
})

t.test('moving to another namespace removes the old namespace\'s members and parent, not the namespace', async (t) => {
  const wf = 'wf-move'
  await deploy(kc, await render('set-move-a', wf), { workflowId: wf })
  const r = await deploy(kc, await render('set-move-b', wf), { workflowId: wf, knownNamespaces: ['set-move-a'] })
  t.equal(r.error, null)
  t.same(r.pruned.map((p) => `${p.kind}/${p.name}@${p.namespace}:${p.action}`).sort(), ['ConfigMap/web-config@set-move-a:deleted', 'Deployment/web@set-move-a:deleted', 'Secret/web-secret@set-move-a:deleted', 'Service/web@set-move-a:deleted'])
  t.match(r.pruned[0].message, /no longer uses this namespace/)
  t.equal(await get('v1', 'ConfigMap', parentName(wf), 'set-move-a'), null, 'the old parent is deleted')
  t.ok(await get('v1', 'Namespace', 'set-move-a'), 'the namespace itself is never pruned')
  t.ok(await get('apps/v1', 'Deployment', 'web', 'set-move-b'))
})

t.test('removeWorkflowObjects: members in reverse apply order, then the parent; nothing else', async (t) => {
  const ns = 'set-remove'
  const wf = 'wf-remove'
  await deploy(kc, await render(ns, wf), { workflowId: wf })
  await deploy(kc, await render(ns, 'wf-neighbour', ['cm']).then((o) => o.map((x) => x.object.kind === 'ConfigMap' ? { ...x, object: { ...x.object, metadata: { ...x.object.metadata, name: 'neighbour-config' } } } : x)), { workflowId: 'wf-neighbour' })
  const lines: string[] = []
  const removed = await removeWorkflowObjects(kc, { workflowId: wf, namespaces: [ns, 'never-used'], log: (l) => lines.push(l) })
  t.same(removed.map((p) => p.action), ['deleted', 'deleted', 'deleted', 'deleted'])
  const order = removed.map((p) => p.kind)
  t.ok(order.indexOf('Service') < order.indexOf('Deployment') && order.indexOf('Deployment') < order.indexOf('ConfigMap') && order.indexOf('Deployment') < order.indexOf('Secret'), `reverse apply order: ${order.join(', ')}`)
  t.ok(await gone('apps/v1', 'Deployment', 'web', ns))
  t.equal(await get('v1', 'ConfigMap', 'web-config', ns), null)
  t.equal(await get('v1', 'ConfigMap', parentName(wf), ns), null, 'the parent is deleted')
  t.ok(await get('v1', 'ConfigMap', 'neighbour-config', ns), 'another workflow\'s object in the namespace stays')
  t.ok(await get('v1', 'ConfigMap', parentName('wf-neighbour'), ns), 'and so does its parent')
  t.ok(await get('v1', 'Namespace', ns), 'the namespace stays')
  t.ok(lines.some((l) => /ApplySet record in namespace set-remove deleted/.test(l)))
  t.same(await removeWorkflowObjects(kc, { workflowId: wf, namespaces: [ns] }), [], 'a second removal finds nothing')
})
