// Registries in the UI's dialect (CONTRACT.md §2.12): camelCase items whose `registryType` and `status` stay
// in the sets the registries page switches on (anything else crashes it), `{registry}` wrappers on writes,
// and the UI's nested `credentials` mapped onto this API's flat login. The routes call the same
// RegistryService methods as src/routes/registries/index.ts; admin writes stay under <root>/api/admin, where
// plugins/auth.ts demands the admin role. Credentials never appear in a reply (the service returns none).
import type { FastifyRequest } from 'fastify'
import type { App } from '../../../app-types.ts'
import { CreateRegistryBody, UpdateRegistryBody, RegistryParams, RegistryListQuery } from '../../../../schemas/registry.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import { BadRequest, UpstreamError } from '../../../errors.ts'
import type { Registry } from '../../../repositories/registries.ts'
import { offsetToPage, withCamelAliases, type Json, isObject } from '../translate.ts'

/** The registry types the UI draws; ours beyond them (quay, harbor) are shown as `custom`, its catch-all. */
const UI_TYPES = new Set(['dockerhub', 'ghcr', 'ecr', 'gcr', 'acr', 'custom'])

/** A registry as the UI reads it: ours plus camelCase, `registryUrl`, `lastCheck`, and in-set enums. */
export function uiRegistry(registry: Registry): Record<string, unknown> {
  return {
    ...withCamelAliases({ ...registry }),
    registryType: UI_TYPES.has(registry.registry_type) ? registry.registry_type : 'custom',
    registryUrl: registry.url,
    lastCheck: registry.last_checked_at,
    // Ours are unknown|connected|error, all in the UI's set; anything else would crash the page.
    status: ['connected', 'disconnected', 'error', 'unknown'].includes(registry.status) ? registry.status : 'unknown',
  }
}

/** The UI's forms send untouched optional inputs as "": absent, as this API means it. */
const given = (v: unknown) => v !== undefined && v !== null && v !== ''

/**
 * The UI's `credentials` object as this API's login (username + password). Each registry's own way to
 * log in to its Docker v2 API with basic auth is used: a GCR service-account key is the password of the
 * user `_json_key`; an ACR service principal logs in as its client id with its secret (the tenant only
 * matters for Azure AD sign-in, not for the registry's token endpoint). ECR has no such login: its
 * password is a 12-hour token minted with the AWS API from access keys, which this service does not do,
 * so access keys are refused rather than stored and never used.
 */
export function loginOf(credentials: unknown): Json {
  if (credentials === undefined || credentials === null) return {}
  if (!isObject(credentials)) throw new BadRequest('body/credentials must be an object')
  const c = Object.fromEntries(Object.entries(credentials).filter(([, v]) => given(v)))
  if ('accessKeyId' in c || 'secretAccessKey' in c || 'region' in c) {
    throw new BadRequest('ECR access keys (accessKeyId, secretAccessKey, region) are not supported: this service logs in to registries with a username and password; for ECR give the registry type "custom" with username "AWS" and an authorization token (aws ecr get-login-password) as the password')
  }
  const { username, password, serviceAccountJson, tenantId: _tenant, clientId, clientSecret, ...rest } = c
  if (Object.keys(rest).length) throw new BadRequest(`body/credentials must not have the field "${Object.keys(rest)[0].slice(0, 64)}"`)
  const kinds = [username !== undefined || password !== undefined, serviceAccountJson !== undefined, clientId !== undefined || clientSecret !== undefined].filter(Boolean).length
  if (kinds > 1) throw new BadRequest('body/credentials: give one login (username and password, serviceAccountJson, or clientId and clientSecret)')
  if (serviceAccountJson !== undefined) {
    if (typeof serviceAccountJson !== 'string') throw new BadRequest('body/credentials/serviceAccountJson must be the key file as text')
    try { if (!isObject(JSON.parse(serviceAccountJson))) throw new Error() } catch { throw new BadRequest('body/credentials/serviceAccountJson must be a service account key (JSON)') }
    return { username: '_json_key', password: serviceAccountJson }
  }
  if (clientId !== undefined || clientSecret !== undefined) return { ...(clientId !== undefined && { username: clientId }), ...(clientSecret !== undefined && { password: clientSecret }) }
  return { ...(username !== undefined && { username }), ...(password !== undefined && { password }) }
}

/** The UI's create/update body as this API's (the canonical schema then checks it). */
function canonicalRegistry(req: FastifyRequest): void {
  const body = req.body
  if (!isObject(body)) return
  const { registryType, registryUrl, credentials, ...rest } = body
  req.body = {
    ...rest,
    ...(given(registryType) && { registry_type: registryType }),
    ...(given(registryUrl) && { url: registryUrl }),
    ...loginOf(credentials),
  }
}

export default async function registryRoutes(app: App) {
  const service = app.services.registries
  const hide = true

  app.get('/registries', {
    schema: { hide, querystring: RegistryListQuery },
    // The UI sends no query and shows what comes back (the registries page, the build form's select): the
    // largest page unless it asks, `limit`/`offset` taken as the rest of the adapter takes them.
    preValidation: async (req) => { req.query = offsetToPage({ limit: String(MAX_PAGE_SIZE), ...(req.query as Json) }) as typeof req.query },
  }, async (req) => {
    const { registry_type, ...page } = req.query
    const result = await service.list(page, { registry_type })
    return { registries: result.items.map(uiRegistry), total: result.total, page: result.page, limit: result.limit }
  })

  app.post('/admin/registries', {
    schema: { hide, body: CreateRegistryBody },
    preValidation: async (req) => canonicalRegistry(req),
  }, async (req, reply) => reply.code(201).send({ registry: uiRegistry(await service.create(req.body)) }))

  app.put('/admin/registries/:id', {
    schema: { hide, params: RegistryParams, body: UpdateRegistryBody },
    preValidation: async (req) => canonicalRegistry(req),
  }, async (req) => ({ registry: uiRegistry(await service.update(req.params.id, req.body)) }))

  app.delete('/admin/registries/:id', {
    schema: { hide, params: RegistryParams },
  }, async (req, reply) => {
    await service.delete(req.params.id)
    return reply.code(204).send(null)
  })

  // The UI marks the registry connected on any 2xx and error otherwise, showing the error text: a failed
  // handshake (recorded as status "error" by the service either way) is a 502 here, with the reason.
  app.post('/admin/registries/:id/test', {
    schema: { hide, params: RegistryParams },
  }, async (req) => {
    const result = await service.test(req.params.id)
    if (result.status !== 'connected') throw new UpstreamError(result.message)
    return result
  })

  app.put('/admin/registries/:id/default', {
    schema: { hide, params: RegistryParams },
  }, async (req) => ({ registry: uiRegistry(await service.setDefault(req.params.id)) }))
}
