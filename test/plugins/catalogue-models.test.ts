// Every built-in plugin, as a canvas node with only its defaults (and a plain value for each required field
// without one), renders through the workflow renderer into the custom resource its operator's published
// model accepts. Operators without a model package are still held to the registration checks (the
// rendered kind and apiVersion match `crd`).
import t from 'tap'
import { parseTemplate, renderManifestTemplate } from '../../src/templating/index.ts'
import { renderWorkflow } from '../../src/manifests/index.ts'
import { BUILTIN_PLUGINS } from '../../src/services/plugin-catalogue/index.ts'
import { checkDefinition } from '../../src/services/crd-plugin-service.ts'
import { PLUGIN_CATEGORIES } from '../../schemas/plugin.ts'
import type { PluginDefinitionInput } from '../../src/repositories/plugins.ts'
import { Certificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1'
import { VirtualService } from '@kubernetes-models/istio/networking.istio.io/v1beta1'
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1'
import { Service as KnativeService } from '@kubernetes-models/knative/serving.knative.dev/v1'
import { KafkaTopic } from '@kubernetes-models/strimzi-kafka-operator/kafka.strimzi.io/v1'
import { Policy } from '@kubernetes-models/kyverno/kyverno.io/v1'
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1'
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { Workflow } from '@kubernetes-models/argo-workflows/argoproj.io/v1alpha1'
import { Application } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1'
import { Cluster } from '@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1'

interface Model { validate(): void }
type ModelClass = new (data: never) => Model

// Istio serves networking.istio.io/v1 since 1.22 with the v1beta1 schema unchanged; the model package
// ships v1beta1 only, so the v1 resource is checked against it under that apiVersion.
const MODELS: Record<string, { model: ModelClass; apiVersion?: string }> = {
  'cert-manager-certificate': { model: Certificate as unknown as ModelClass },
  'istio-virtual-service': { model: VirtualService as unknown as ModelClass, apiVersion: 'networking.istio.io/v1beta1' },
  'gateway-api-httproute': { model: HTTPRoute as unknown as ModelClass },
  'knative-service': { model: KnativeService as unknown as ModelClass },
  'strimzi-kafka-topic': { model: KafkaTopic as unknown as ModelClass },
  'kyverno-require-label': { model: Policy as unknown as ModelClass },
  'keda-prometheus-scaledobject': { model: ScaledObject as unknown as ModelClass },
  'prometheus-service-monitor': { model: ServiceMonitor as unknown as ModelClass },
  'argo-workflow': { model: Workflow as unknown as ModelClass },
  'argo-cd-application': { model: Application as unknown as ModelClass },
  'cloudnative-pg-cluster': { model: Cluster as unknown as ModelClass },
}

const SAMPLE: Record<string, string | number | boolean> = { string: 'example', textarea: 'echo hello', number: 2, boolean: true, secret: 'not-a-real-secret' }

/** Node data as a user who filled in only the required fields leaves it (defaults apply at render time). */
function minimalNodeData(p: (typeof BUILTIN_PLUGINS)[number]): Record<string, unknown> {
  const data: Record<string, unknown> = { name: 'demo', namespace: 'apps', pluginId: p.name }
  for (const f of p.config_fields) if (f.default === undefined && f.required) data[f.name] = SAMPLE[f.type]
  return data
}

async function renderAsNode(p: (typeof BUILTIN_PLUGINS)[number]) {
  const lookup = (id: string) => id === p.name ? { ...p, id: p.name, enabled: true, config_fields: p.config_fields.map((f) => ({ ...f, required: f.required ?? false })) } : null
  return renderWorkflow({ nodes: [{ id: 'n1', type: 'plugin', data: minimalNodeData(p) }], edges: [] }, { workflowId: 'wf', plugins: lookup, revealSecrets: true })
}

t.test('the catalogue has at least 13 plugins, unique names, and at least one per category', async (t) => {
  t.ok(BUILTIN_PLUGINS.length >= 13, `${BUILTIN_PLUGINS.length} plugins`)
  t.equal(new Set(BUILTIN_PLUGINS.map((p) => p.name)).size, BUILTIN_PLUGINS.length)
  for (const category of PLUGIN_CATEGORIES) t.ok(BUILTIN_PLUGINS.some((p) => p.category === category), category)
  for (const p of BUILTIN_PLUGINS) t.match(p.description, /Requires /, `${p.name} names what to install`)
})

t.test('every catalogue entry passes the registration checks', async (t) => {
  for (const p of BUILTIN_PLUGINS) {
    t.doesNotThrow(() => checkDefinition({ ...p, description: p.description ?? '', icon: p.icon ?? 'plugin', config_fields: p.config_fields ?? [] } as PluginDefinitionInput), p.name)
  }
})

t.test('each plugin with a model package renders, with its defaults, a resource the model accepts', async (t) => {
  t.equal(Object.keys(MODELS).filter((name) => BUILTIN_PLUGINS.some((p) => p.name === name)).length, Object.keys(MODELS).length, 'every model maps to a catalogue entry')
  for (const p of BUILTIN_PLUGINS) {
    const { objects, diagnostics } = await renderAsNode(p)
    t.same(diagnostics.filter((d) => d.severity === 'error'), [], `${p.name} renders without errors`)
    // The renderer puts the node's namespace in front of it; the plugin itself yields one object.
    const own = objects.filter((o) => o.object.kind !== 'Namespace')
    t.equal(own.length, 1, `${p.name} renders one object`)
    const doc = own[0]?.object
    t.match(doc, { apiVersion: `${p.crd.group}/${p.crd.version}`, kind: p.crd.kind, metadata: { name: 'demo', namespace: 'apps' } }, `${p.name} is the ${p.crd.kind} it declares`)
    const entry = MODELS[p.name]
    if (!entry) continue
    const obj = { ...doc, ...(entry.apiVersion && { apiVersion: entry.apiVersion }) }
    t.doesNotThrow(() => new entry.model(obj as never).validate(), `${p.name} validates against its ${p.crd.kind} model`)
  }
})

t.test('the model check is not vacuous: a resource with a wrongly typed field is refused', async (t) => {
  const cert = BUILTIN_PLUGINS.find((p) => p.name === 'cert-manager-certificate')!
  const [doc] = renderManifestTemplate(parseTemplate(cert.template), { ...minimalNodeData(cert), issuerKind: 'Issuer', privateKeyAlgorithm: 'RSA', issuerName: 'x', duration: '1h', renewBefore: '1m' }) as Array<{ spec: Record<string, unknown> }>
  t.throws(() => new Certificate({ ...doc, spec: { ...doc.spec, dnsNames: 'not-a-list' } } as never).validate())
})
