import { createHash } from 'node:crypto'
import type { Registry } from './registry.ts'
import type { ResourceType } from './resources.ts'
import type { JsonObject } from './util.ts'

// Discovery documents: the legacy shapes (/api, /apis, /apis/<g>, per group-version resource lists)
// and the aggregated v2 form kubectl 1.30+ asks for first, which saves it a request per group.

export const aggregatedContentType = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'

export function wantsAggregated(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (!accept) return undefined
  for (const part of accept.split(',')) {
    if (!/as=APIGroupDiscoveryList/.test(part) || !/g=apidiscovery\.k8s\.io/.test(part)) continue
    if (/v=v2(;|$|\s)/.test(part + ';')) return 'v2'
    if (/v=v2beta1/.test(part)) return 'v2beta1'
  }
  return undefined
}

export function apiVersions(serverAddress: string): JsonObject {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] }
}

function groupEntry(g: { group: string; versions: string[] }): JsonObject {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.group}/${v}`, version: v }))
  return { name: g.group, versions, preferredVersion: versions[0] }
}

export function apiGroupList(reg: Registry): JsonObject {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: reg.groups().filter((g) => g.group).map(groupEntry) }
}

export function apiGroup(reg: Registry, group: string): JsonObject | undefined {
  const g = reg.groups().find((x) => x.group === group)
  return g && group ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(g) } : undefined
}

function storageVersionHash(rt: ResourceType): string {
  return createHash('sha256').update(`${rt.group}/${rt.version}/${rt.kind}`).digest('base64').slice(0, 11)
}

export function resourceList(reg: Registry, group: string, version: string): JsonObject | undefined {
  const rts = reg.resourcesIn(group, version)
  if (!rts.length) return undefined
  const resources: JsonObject[] = []
  for (const rt of rts) {
    const r: JsonObject = { name: rt.plural, singularName: rt.singular, namespaced: rt.namespaced, kind: rt.kind, verbs: rt.verbs }
    if (rt.shortNames.length) r.shortNames = rt.shortNames
    if (rt.categories.length) r.categories = rt.categories
    if (!rt.virtual) r.storageVersionHash = storageVersionHash(rt)
    resources.push(r)
    for (const [sub, s] of Object.entries(rt.subresources)) {
      const sr: JsonObject = { name: `${rt.plural}/${sub}`, singularName: '', namespaced: rt.namespaced, kind: s.kind, verbs: s.verbs }
      if (s.group !== undefined) { sr.group = s.group; sr.version = s.version }
      resources.push(sr)
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources }
}

function aggregatedResource(rt: ResourceType): JsonObject {
  const r: JsonObject = {
    resource: rt.plural,
    responseKind: { group: rt.group, version: rt.version, kind: rt.kind },
    scope: rt.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: rt.singular,
    verbs: rt.verbs,
  }
  if (rt.shortNames.length) r.shortNames = rt.shortNames
  if (rt.categories.length) r.categories = rt.categories
  const subs = Object.entries(rt.subresources)
  if (subs.length) {
    r.subresources = subs.map(([sub, s]) => ({
      subresource: sub,
      responseKind: { group: s.group ?? rt.group, version: s.version ?? rt.version, kind: s.kind },
      verbs: s.verbs,
    }))
  }
  return r
}

/** The aggregated document for `/api` (core only) or `/apis` (every named group). */
export function aggregated(reg: Registry, legacy: boolean, version: 'v2' | 'v2beta1'): JsonObject {
  const items = reg.groups().filter((g) => (legacy ? g.group === '' : g.group !== '')).map((g) => ({
    metadata: legacy ? { creationTimestamp: null } : { name: g.group, creationTimestamp: null },
    versions: g.versions.map((v) => ({ version: v, resources: reg.resourcesIn(g.group, v).map(aggregatedResource), freshness: 'Current' })),
  }))
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items }
}

export function etag(doc: JsonObject): string {
  return `"${createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase()}"`
}
