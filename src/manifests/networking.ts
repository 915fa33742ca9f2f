// Service, Ingress and NetworkPolicy. What an edge implies (selector, target port, backend, pod selector)
// fills only what the node leaves unset.
import { Service } from 'kubernetes-models/v1/Service'
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IIoK8sApiCoreV1ServicePort as ServicePort } from 'kubernetes-models/v1/ServicePort'
import type { IIoK8sApimachineryPkgApisMetaV1LabelSelector as LabelSelector } from '@kubernetes-models/apimachinery/apis/meta/v1/LabelSelector'
import { linksOf, objectMeta, str, stringMap, type BuildInput, type Builder, type Link } from './build-context.ts'
import { INSTANCE_LABEL, NAME_LABEL, labelProblems, labelValue, selectorLabels } from './metadata.ts'
import type { NodeView } from './build-context.ts'

export const DEFAULT_SERVICE_PORT = 80

/** The port a service node exposes first (what a connected ingress routes to). */
export function servicePort(service: NodeView): number {
  const ports = service.data.ports as Array<{ port: number }> | undefined
  return ports?.[0]?.port ?? (service.data.port as number | undefined) ?? DEFAULT_SERVICE_PORT
}

/**
 * A selector for the pods of the connected workloads: their labels when there is one, a set-based
 * selector on name when there are several (all from this workflow).
 */
export function workloadsSelector(workflowId: string, links: Link[]): LabelSelector {
  const names = [...new Set(links.map((l) => l.peer.name))]
  if (names.length === 1) return { matchLabels: selectorLabels(names[0], workflowId) }
  return {
    matchLabels: { [INSTANCE_LABEL]: labelValue(workflowId) },
    matchExpressions: [{ key: NAME_LABEL, operator: 'In', values: names }],
  }
}

export const service: Builder = (input) => {
  const { node, report, ctx } = input
  const d = node.data
  const type = str(d, 'serviceType') ?? 'ClusterIP'
  const workloads = linksOf(input, 'workload-service')
  const explicitSelector = stringMap(d, 'selector')
  if (explicitSelector) for (const p of labelProblems(explicitSelector, 'selector')) report.error(p)
  if (workloads.length > 1 && !explicitSelector) {
    report.warn(`${workloads.length} workloads are connected; a service selects one set of pods, so it selects ${workloads[0].peer.name}'s`)
  }
  const workload = workloads[0]?.peer
  const impliedTarget = workload?.data.port as number | undefined
  const externalName = str(d, 'externalName')
  if (type === 'ExternalName' && !externalName) report.error('externalName: required for an ExternalName service')
  if (type !== 'ExternalName' && externalName !== undefined) report.warn(`externalName has no effect on a ${type} service`)

  let ports: ServicePort[]
  const listed = d.ports as Array<ServicePort> | undefined
  if (listed && listed.length > 0) {
    if (d.port !== undefined || d.targetPort !== undefined) report.warn('ports is set, so port and targetPort have no effect')
    ports = listed.map((p) => ({
      ...p,
      ...(p.name === undefined && listed.length > 1 && { name: `port-${p.port}` }),
      ...(p.targetPort === undefined && impliedTarget !== undefined && { targetPort: impliedTarget }),
    }))
  } else {
    const targetPort = (d.targetPort as number | string | undefined) ?? impliedTarget
    ports = [{ port: (d.port as number | undefined) ?? DEFAULT_SERVICE_PORT, protocol: 'TCP', ...(targetPort !== undefined && { targetPort }) }]
  }
  const selector = explicitSelector ?? (workload ? selectorLabels(workload.name, ctx.workflowId) : undefined)
  if (type === 'ExternalName' && selector && explicitSelector) report.warn('selector has no effect on an ExternalName service')
  return [new Service({
    metadata: objectMeta(input),
    spec: {
      type: type as 'ClusterIP',
      ports,
      ...(type === 'ExternalName' ? { externalName } : selector && { selector }),
    },
  })]
}

interface IngressPath { path: string; pathType?: string; serviceName?: string; servicePort?: number }

export const ingress: Builder = (input) => {
  const { node, report } = input
  const d = node.data
  const services = linksOf(input, 'service-ingress').map((l) => l.peer)
  const connected = services[0]
  const listed = d.paths as IngressPath[] | undefined
  let paths: IngressPath[]
  if (listed && listed.length > 0) {
    paths = listed
  } else {
    if (!connected) report.error('paths: required when no service is connected')
    if (services.length > 1) report.warn(`${services.length} services are connected but no paths are listed; / routes to ${connected.name} (list paths with serviceName to route to the others)`)
    paths = connected ? [{ path: '/' }] : []
  }
  const httpPaths = paths.map((p, i) => {
    const name = p.serviceName ?? connected?.name
    const port = p.servicePort ?? (p.serviceName === undefined || p.serviceName === connected?.name ? (connected && servicePort(connected)) : undefined)
    if (!name) report.error(`paths/${i}/serviceName: required when no service is connected`)
    if (name && port === undefined) report.error(`paths/${i}/servicePort: required for a service that is not connected`)
    return { path: p.path, pathType: (p.pathType ?? 'Prefix') as 'Prefix', backend: { service: { name: name ?? '', port: { number: port ?? 0 } } } }
  })
  const host = str(d, 'host')
  const tlsSecretName = str(d, 'tlsSecretName')
  const tls = d.tlsEnabled === true
  if (!tls && tlsSecretName !== undefined) report.warn('tlsSecretName has no effect while tlsEnabled is false')
  if (tls && !host) report.warn('TLS without a host applies the certificate to every host')
  return [new Ingress({
    metadata: objectMeta(input),
    spec: {
      ...(d.ingressClassName !== undefined && { ingressClassName: d.ingressClassName as string }),
      rules: [{ ...(host && { host }), http: { paths: httpPaths } }],
      ...(tls && { tls: [{ ...(host && { hosts: [host] }), secretName: tlsSecretName ?? `${node.name}-tls` }] }),
    },
  })]
}

export const networkpolicy: Builder = (input) => {
  const { node, report, ctx } = input
  const d = node.data
  const explicit = stringMap(d, 'podSelector')
  if (explicit) for (const p of labelProblems(explicit, 'podSelector')) report.error(p)
  const workloads = linksOf(input, 'workload-networkpolicy')
  if (!explicit && workloads.length === 0) report.warn('no podSelector and no connected workload: the policy applies to every pod in the namespace')
  const podSelector = explicit ? { matchLabels: explicit } : workloads.length > 0 ? workloadsSelector(ctx.workflowId, workloads) : {}
  return [new NetworkPolicy({
    metadata: objectMeta(input),
    spec: {
      podSelector,
      ...(d.policyTypes !== undefined && { policyTypes: d.policyTypes as Array<'Ingress' | 'Egress'> }),
      ...(d.ingress !== undefined && { ingress: d.ingress as object[] }),
      ...(d.egress !== undefined && { egress: d.egress as object[] }),
    },
  })]
}
