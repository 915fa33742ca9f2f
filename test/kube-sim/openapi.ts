import { createHash } from 'node:crypto'
import type { Registry } from './registry.ts'
import { apiVersionOf, type ResourceType } from './resources.ts'
import type { JsonObject } from './util.ts'

// A deliberately thin OpenAPI: per group-version documents whose operations carry the
// `x-kubernetes-group-version-kind` and query parameters (fieldValidation, dryRun, fieldManager,
// force) kubectl probes before choosing server-side field validation. Schemas are open objects:
// the simulator does not validate field names, so nothing here should claim it does.

const param = (name: string, description: string) => ({ name, in: 'query', description, schema: { type: 'string', uniqueItems: true } })
const writeParams = [
  param('dryRun', 'When present, indicates that modifications should not be persisted.'),
  param('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
  param('fieldValidation', 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields.'),
]

function schemaName(rt: ResourceType): string {
  const g = rt.group === '' ? 'core' : rt.group
  return `io.k8s.sim.${g}.${rt.version}.${rt.kind}`
}

function kindSchema(rt: ResourceType): JsonObject {
  return {
    type: 'object',
    description: `${rt.kind} (kube-sim: schema not modelled)`,
    properties: {
      apiVersion: { type: 'string' }, kind: { type: 'string' },
      metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    'x-kubernetes-preserve-unknown-fields': true,
    'x-kubernetes-group-version-kind': [{ group: rt.group, version: rt.version, kind: rt.kind }],
  }
}

function groupVersionDoc(reg: Registry, group: string, version: string): JsonObject | undefined {
  const rts = reg.resourcesIn(group, version).filter((r) => !r.virtual)
  if (!rts.length) return undefined
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`
  const paths: JsonObject = {}
  for (const rt of rts) {
    const gvk = { group: rt.group, version: rt.version, kind: rt.kind }
    // Schemas are deliberately not published: kubectl then computes client-side apply patches from
    // its built-in types (or JSON merge patch for custom resources) instead of from empty schemas.
    const ref = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }
    const body = { content: { 'application/json': { schema: ref } } }
    const ok = { responses: { 200: { description: 'OK', content: { 'application/json': { schema: ref } } } } }
    const op = (action: string, extra: JsonObject = {}) => ({ operationId: `${action}${rt.kind}`, 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk, ...ok, ...extra })
    const item = rt.namespaced ? `${prefix}/namespaces/{namespace}/${rt.plural}/{name}` : `${prefix}/${rt.plural}/{name}`
    const coll = rt.namespaced ? `${prefix}/namespaces/{namespace}/${rt.plural}` : `${prefix}/${rt.plural}`
    paths[coll] = { get: op('list'), post: op('post', { parameters: writeParams, requestBody: body }), delete: op('deletecollection') }
    paths[item] = {
      get: op('get'), put: op('put', { parameters: writeParams, requestBody: body }), delete: op('delete', { parameters: [writeParams[0]] }),
      patch: op('patch', { parameters: [...writeParams, param('force', 'Force is going to "force" Apply requests.')], requestBody: { content: { 'application/apply-patch+yaml': { schema: { type: 'object' } }, 'application/json-patch+json': { schema: { type: 'object' } }, 'application/merge-patch+json': { schema: { type: 'object' } }, 'application/strategic-merge-patch+json': { schema: { type: 'object' } } } } }),
    }
    if (rt.subresources.status) paths[`${item}/status`] = { get: op('get'), put: op('put', { parameters: writeParams, requestBody: body }), patch: op('patch', { parameters: writeParams }) }
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: {} }
}

function hashOf(doc: JsonObject): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase()
}

export function openapi(reg: Registry, path: string): JsonObject | undefined {
  if (path === '/openapi/v3' || path === '/openapi/v3/') {
    const paths: JsonObject = {}
    for (const { group, versions } of reg.groups()) {
      for (const v of versions) {
        const doc = groupVersionDoc(reg, group, v)
        if (!doc) continue
        const key = group ? `apis/${group}/${v}` : `api/${v}`
        paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(doc)}` }
      }
    }
    return { paths }
  }
  const m = /^\/openapi\/v3\/(api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path)
  if (m) return m[2] ? groupVersionDoc(reg, '', m[2]) : groupVersionDoc(reg, m[3], m[4])
  if (path === '/openapi/v2') {
    const definitions: JsonObject = {}
    for (const rt of reg.all()) if (!rt.virtual) definitions[schemaName(rt)] = { ...kindSchema(rt), description: `${apiVersionOf(rt)} ${rt.kind}` }
    return { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {}, definitions }
  }
  return undefined
}
