import type { IncomingMessage, ServerResponse } from 'node:http'
import { compileFilter, patchContentTypes, type DeleteOptions, type ObjectApi, type WriteOptions } from './api.ts'
import type { Authenticator, UserInfo } from './auth.ts'
import { aggregated, aggregatedContentType, apiGroup, apiGroupList, apiVersions, etag, resourceList, wantsAggregated } from './discovery.ts'
import { boolParam, decodeBody, intParam, readBody, sendJson } from './http.ts'
import type { Registry } from './registry.ts'
import { apiVersionOf, type ResourceType } from './resources.ts'
import { ApiError, badRequest, notFound, statusObject, successStatus } from './status.ts'
import { partialMetadata, toTable, type IncludeObject } from './table.ts'
import type { WatchHub } from './watch.ts'
import { isObject, type Json, type JsonObject, type KObject } from './util.ts'

export interface Target { rt: ResourceType; namespace?: string; name?: string; subresource?: string }

/** Hooks for the endpoints that are not plain storage: logs, metrics, OpenAPI. */
export interface RestExtensions {
  logs(req: IncomingMessage, res: ServerResponse, t: Target, q: URLSearchParams): Promise<void>
  metrics(t: Target, q: URLSearchParams): JsonObject
  openapi(path: string, q: URLSearchParams): JsonObject | undefined
}

const notFoundPage = () => statusObject(404, 'the server could not find the requested resource', 'NotFound', {})

/** Parses `/api/v1/...` and `/apis/<g>/<v>/...` into the resource being addressed. */
export function parseTarget(reg: Registry, segs: string[]): Target | 'discovery' | undefined {
  let group: string
  let version: string
  let rest: string[]
  if (segs[0] === 'api' && segs.length >= 2) { group = ''; version = segs[1]; rest = segs.slice(2) } else if (segs[0] === 'apis' && segs.length >= 3) { group = segs[1]; version = segs[2]; rest = segs.slice(3) } else return undefined
  if (!rest.length) return 'discovery'
  let namespace: string | undefined
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(group === '' && rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  const rt = reg.find(group, version, rest[0])
  if (!rt || rest.length > 3) return undefined
  if (namespace !== undefined && !rt.namespaced) return undefined
  const t: Target = { rt, namespace, name: rest[1], subresource: rest[2] }
  if (t.subresource && !rt.subresources[t.subresource]) return undefined
  return t
}

function acceptsTable(accept: string | undefined): boolean { return /as=Table/.test(accept ?? '') }
function acceptsPartial(accept: string | undefined): boolean { return /as=PartialObjectMetadata/.test(accept ?? '') }

function userAgentManager(req: IncomingMessage): string {
  const ua = req.headers['user-agent'] ?? ''
  return ua.split('/')[0].slice(0, 128) || 'unknown'
}

export class RestHandler {
  constructor(
    private readonly api: ObjectApi,
    private readonly registry: Registry,
    private readonly watches: WatchHub,
    private readonly authn: Authenticator,
    private readonly ext: RestExtensions,
    private readonly serverAddress: () => string,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, user: UserInfo): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://sim')
    const segs = url.pathname.split('/').filter(Boolean)
    const q = url.searchParams
    const method = (req.method ?? 'GET').toUpperCase()
    const pretty = boolParam(q, 'pretty')

    if (segs[0] === 'openapi') {
      const doc = this.ext.openapi(url.pathname, q)
      if (!doc) { sendJson(res, 404, notFoundPage()); return }
      sendJson(res, 200, doc, { ETag: etag(doc) })
      return
    }
    if (method === 'GET' && (url.pathname === '/api' || url.pathname === '/apis')) {
      const agg = wantsAggregated(req.headers.accept)
      if (agg) {
        const doc = aggregated(this.registry, url.pathname === '/api', agg)
        this.sendDiscovery(req, res, doc, aggregatedContentType.replace('v=v2', `v=${agg}`))
      } else this.sendDiscovery(req, res, url.pathname === '/api' ? apiVersions(this.serverAddress()) : apiGroupList(this.registry))
      return
    }
    if (method === 'GET' && segs[0] === 'apis' && segs.length === 2) {
      const g = apiGroup(this.registry, segs[1])
      if (!g) { sendJson(res, 404, notFoundPage()); return }
      this.sendDiscovery(req, res, g)
      return
    }
    const target = parseTarget(this.registry, segs)
    if (target === 'discovery') {
      const doc = method === 'GET' ? resourceList(this.registry, segs[0] === 'api' ? '' : segs[1], segs[0] === 'api' ? segs[1] : segs[2]) : undefined
      if (!doc) { sendJson(res, 404, notFoundPage()); return }
      this.sendDiscovery(req, res, doc)
      return
    }
    if (!target) { sendJson(res, 404, notFoundPage()); return }
    await this.resource(req, res, target, q, method, user, pretty)
  }

  private sendDiscovery(req: IncomingMessage, res: ServerResponse, doc: JsonObject, contentType = 'application/json'): void {
    const tag = etag(doc)
    if (req.headers['if-none-match'] === tag) { res.writeHead(304, { ETag: tag }); res.end(); return }
    sendJson(res, 200, doc, { 'Content-Type': contentType, ETag: tag, Vary: 'Accept' })
  }

  private writeOptions(req: IncomingMessage, q: URLSearchParams, subresource?: string): WriteOptions {
    const dry = q.getAll('dryRun')
    if (dry.some((d) => d !== 'All')) throw badRequest(`Invalid value: ${JSON.stringify(dry)}: supported values: "All"`)
    const fm = q.get('fieldManager') ?? undefined
    const fv = q.get('fieldValidation')
    if (fv && !['Ignore', 'Warn', 'Strict'].includes(fv)) throw badRequest(`fieldValidation: Invalid value: "${fv}"`)
    return { dryRun: dry.length > 0, fieldManager: fm, defaultManager: userAgentManager(req), subresource, force: boolParam(q, 'force') }
  }

  private async resource(req: IncomingMessage, res: ServerResponse, t: Target, q: URLSearchParams, method: string, user: UserInfo, pretty: boolean): Promise<void> {
    const { rt } = t
    const accept = req.headers.accept
    const verbAllowed = (v: string) => {
      if (!rt.verbs.includes(v) && !t.subresource) throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed', { kind: rt.plural, group: rt.group || undefined, name: t.name })
    }
    const ns = rt.namespaced ? t.namespace : undefined
    const out = (code: number, body: unknown) => sendJson(res, code, body, {}, pretty)
    const present = (o: KObject) => (acceptsPartial(accept) ? partialMetadata(o) : o)
    const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject

    if (rt.virtual) {
      await this.virtual(req, res, t, q, method, user, pretty)
      return
    }

    // Subresources with their own protocols.
    if (t.subresource === 'log') {
      if (method !== 'GET') throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
      await this.ext.logs(req, res, t, q)
      return
    }
    if (t.subresource === 'exec') throw badRequest('Upgrade request required')
    if (t.subresource === 'token') {
      if (method !== 'POST') throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
      const sa = this.api.get(rt, ns, t.name!)
      const body = await this.lenientBody(req)
      const exp = Math.max(600, Number(body?.spec?.expirationSeconds ?? 3600))
      const { token, expiresAt } = await this.authn.issueServiceAccountToken(ns!, t.name!, sa.metadata.uid!, exp, body?.spec?.audiences ?? undefined)
      out(201, { kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1', metadata: { name: t.name, namespace: ns, creationTimestamp: null }, spec: { audiences: body?.spec?.audiences ?? ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: exp }, status: { token, expirationTimestamp: expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z') } })
      return
    }
    if (t.subresource === 'scale') {
      if (method === 'GET') { out(200, this.api.getScale(rt, ns, t.name!)); return }
      const body = decodeBody(await readBody(req), req.headers['content-type'])
      const wo = this.writeOptions(req, q, 'scale')
      if (method === 'PUT') { out(200, this.api.updateScale(rt, ns, t.name!, body, wo)); return }
      if (method === 'PATCH') {
        const type = patchContentTypes[(req.headers['content-type'] ?? '').split(';')[0].trim()]
        if (!type) throw new ApiError(415, 'the body of the request was in an unknown format', 'UnsupportedMediaType')
        out(200, this.api.patchScale(rt, ns, t.name!, type, body, wo))
        return
      }
      throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
    }
    if (t.subresource === 'finalize') {
      if (method !== 'PUT') throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
      const body = decodeBody(await readBody(req), req.headers['content-type']) as KObject
      const cur = this.api.get(rt, ns, t.name!)
      cur.spec = { ...(cur.spec ?? {}), finalizers: body?.spec?.finalizers ?? [] }
      out(200, this.api.update(rt, ns, t.name!, cur, { ...this.writeOptions(req, q), subresource: 'finalize' }))
      return
    }

    switch (method) {
      case 'GET': {
        if (t.name) {
          verbAllowed('get')
          const o = this.api.get(rt, ns, t.name)
          out(200, acceptsTable(accept) ? toTable(rt, [o], include, { resourceVersion: o.metadata.resourceVersion }) : present(o))
          return
        }
        if (boolParam(q, 'watch')) {
          verbAllowed('watch')
          this.watches.serve(res, {
            rt, namespace: ns, filter: compileFilter(rt, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined }),
            resourceVersion: q.get('resourceVersion') ?? undefined, allowBookmarks: boolParam(q, 'allowWatchBookmarks'),
            sendInitialEvents: boolParam(q, 'sendInitialEvents'), timeoutSeconds: intParam(q, 'timeoutSeconds'),
            table: acceptsTable(accept) ? include : undefined,
          })
          return
        }
        verbAllowed('list')
        const r = this.api.list(rt, ns, {
          labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined,
          limit: intParam(q, 'limit'), continue: q.get('continue') ?? undefined,
          resourceVersion: q.get('resourceVersion') ?? undefined, resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
        })
        const meta: JsonObject = { resourceVersion: r.resourceVersion }
        if (r.continue) { meta.continue = r.continue; meta.remainingItemCount = r.remainingItemCount }
        if (acceptsTable(accept)) { out(200, toTable(rt, r.items, include, meta)); return }
        if (acceptsPartial(accept)) { out(200, { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: meta, items: r.items.map(partialMetadata) }); return }
        // Built-in lists carry no per-item kind/apiVersion on the wire; custom resources do.
        const items = rt.crd ? r.items : r.items.map((o) => { const { kind: _k, apiVersion: _a, ...rest } = o; return rest })
        out(200, { kind: rt.listKind, apiVersion: apiVersionOf(rt), metadata: meta, items })
        return
      }
      case 'POST': {
        if (t.name) throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
        verbAllowed('create')
        const body = decodeBody(await readBody(req), req.headers['content-type'])
        const o = this.api.create(rt, ns, body, this.writeOptions(req, q))
        out(201, present(o))
        return
      }
      case 'PUT': {
        if (!t.name) throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
        verbAllowed('update')
        const body = decodeBody(await readBody(req), req.headers['content-type'])
        out(200, present(this.api.update(rt, ns, t.name, body, this.writeOptions(req, q, t.subresource))))
        return
      }
      case 'PATCH': {
        if (!t.name) throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
        verbAllowed('patch')
        const ct = (req.headers['content-type'] ?? '').split(';')[0].trim()
        const type = patchContentTypes[ct]
        if (!type) throw new ApiError(415, `the body of the request was in an unknown format - accepted media types include: ${Object.keys(patchContentTypes).join(', ')}`, 'UnsupportedMediaType')
        const body = decodeBody(await readBody(req), type === 'apply' ? 'application/yaml' : 'application/json')
        const r = this.api.patch(rt, ns, t.name, type, body, this.writeOptions(req, q, t.subresource))
        out(r.created ? 201 : 200, present(r.obj))
        return
      }
      case 'DELETE': {
        const opts = await this.deleteOptions(req, q)
        if (!t.name) {
          verbAllowed('deletecollection')
          const items = this.api.deleteCollection(rt, ns, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined }, opts)
          out(200, { kind: rt.listKind, apiVersion: apiVersionOf(rt), metadata: { resourceVersion: String(this.api.store.resourceVersion) }, items })
          return
        }
        verbAllowed('delete')
        const r = this.api.delete(rt, ns, t.name, opts)
        if (!r.pending && rt.plural === 'namespaces') { out(200, successStatus({ name: t.name, kind: rt.plural })); return }
        // Graceful pod and namespace deletions answer 200 with the terminating object; finalizer waits answer 202.
        out(r.pending && !(!rt.group && (rt.plural === 'pods' || rt.plural === 'namespaces')) ? 202 : 200, present(r.obj))
        return
      }
      default:
        throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
    }
  }

  /**
   * Bodies of requests whose content the simulator does not need in full. kubectl's typed clients
   * send these as protobuf, which is not decoded here: defaults are used instead.
   */
  private async lenientBody(req: IncomingMessage): Promise<Json> {
    const buf = await readBody(req)
    if (/protobuf/.test(req.headers['content-type'] ?? '') || !buf.length) return {}
    return decodeBody(buf, req.headers['content-type'])
  }

  private async deleteOptions(req: IncomingMessage, q: URLSearchParams): Promise<DeleteOptions> {
    const b = await this.lenientBody(req)
    const body: JsonObject = isObject(b) ? b : {}
    const dry = [...q.getAll('dryRun'), ...((body.dryRun as string[] | undefined) ?? [])]
    if (dry.some((d) => d !== 'All')) throw badRequest(`Invalid value: ${JSON.stringify(dry)}: supported values: "All"`)
    const policy = (q.get('propagationPolicy') ?? body.propagationPolicy) as DeleteOptions['propagationPolicy'] | undefined
    if (policy && !['Background', 'Foreground', 'Orphan'].includes(policy)) throw badRequest(`propagationPolicy: Unsupported value: "${policy}"`)
    const orphan = q.get('orphanDependents') ?? body.orphanDependents
    return {
      dryRun: dry.length > 0, propagationPolicy: policy,
      orphanDependents: orphan === undefined || orphan === null ? undefined : orphan === true || orphan === 'true',
      gracePeriodSeconds: intParam(q, 'gracePeriodSeconds') ?? (typeof body.gracePeriodSeconds === 'number' ? body.gracePeriodSeconds : undefined),
      preconditions: isObject(body.preconditions) ? body.preconditions : undefined,
    }
  }

  /** Resources computed on request: metrics, and the self-reviews kubectl auth uses. */
  private async virtual(req: IncomingMessage, res: ServerResponse, t: Target, q: URLSearchParams, method: string, user: UserInfo, pretty: boolean): Promise<void> {
    const { rt } = t
    if (rt.group === 'metrics.k8s.io') {
      if (method !== 'GET' || boolParam(q, 'watch')) throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
      sendJson(res, 200, this.ext.metrics(t, q), {}, pretty)
      return
    }
    if (method !== 'POST' || t.name) throw new ApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed')
    const body = await this.lenientBody(req)
    if (rt.kind === 'SelfSubjectReview') {
      sendJson(res, 201, { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1', metadata: { creationTimestamp: null }, status: { userInfo: { username: user.username, uid: user.uid, groups: user.groups, extra: user.extra } } }, {}, pretty)
      return
    }
    if (rt.kind === 'SelfSubjectAccessReview') {
      // No authorization is modelled: every authenticated user may do everything.
      sendJson(res, 201, { ...body, metadata: { creationTimestamp: null }, status: { allowed: true, reason: 'kube-sim authorizes every authenticated user' } }, {}, pretty)
      return
    }
    throw notFound(rt.plural, rt.group, t.name ?? '')
  }
}
