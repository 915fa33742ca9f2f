// Registries (spec "Registries" and "Registry administration"): every signed-in user reads them; the
// writes live under /v1/api/admin, where plugins/auth.ts demands the admin role. Credentials are write-only.
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import {
  CreateRegistryBody, UpdateRegistryBody, RegistryParams, RegistryListQuery, RegistryList, RegistryLookupQuery, RegistryTestResult,
} from '../../../schemas/registry.ts'
import { pageReply } from '../../repositories/pagination.ts'

const tags = ['registries']
const RegistryRef = Type.Ref('Registry')

export default async function registryRoutes(app: App) {
  const service = app.services.registries

  app.get('/v1/api/registries', {
    schema: {
      tags, operationId: 'listRegistries', summary: 'container registries (search matches name and url)',
      querystring: RegistryListQuery, response: { 200: RegistryList, ...errorResponses(400, 401) },
    },
  }, async (req) => {
    const { registry_type, ...page } = req.query
    return pageReply('registries', await service.list(page, { registry_type }))
  })

  // A static segment outranks `:id` in the router, so "lookup" is never taken for an id.
  app.get('/v1/api/registries/lookup', {
    schema: {
      tags, operationId: 'lookupRegistry',
      summary: 'the registry whose host the image names (`docker.io` when the image names none); the default wins when several serve that host',
      querystring: RegistryLookupQuery, response: { 200: RegistryRef, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => service.lookup(req.query.image))

  app.get('/v1/api/registries/:id', {
    schema: { tags, operationId: 'getRegistry', summary: 'one registry', params: RegistryParams, response: { 200: RegistryRef, ...errorResponses(401, 404) } },
  }, async (req) => service.get(req.params.id))

  app.post('/v1/api/admin/registries', {
    schema: {
      tags, operationId: 'createRegistry', summary: 'add a registry (admin); its password or token is sealed and never returned',
      description: 'The registry is tested at once (the Docker Registry v2 handshake of POST /admin/registries/{id}/test, bounded by its timeout) and the answer carries the outcome: `status` `connected` or `error`, `status_message`, `last_checked_at`. One that cannot be reached now is still added, with status `error` saying why.',
      body: CreateRegistryBody, response: { 201: RegistryRef, ...errorResponses(400, 401, 403, 409) },
    },
  }, async (req, reply) => reply.code(201).send(await service.create(req.body)))

  app.put('/v1/api/admin/registries/:id', {
    schema: {
      tags, operationId: 'updateRegistry', summary: 'update a registry (admin); credentials are replaced only when given',
      description: 'A change of url, type or login is tested at once, as an add is, and the answer carries the new outcome; a change of name alone keeps the last one.',
      params: RegistryParams, body: UpdateRegistryBody, response: { 200: RegistryRef, ...errorResponses(400, 401, 403, 404, 409) },
    },
  }, async (req) => service.update(req.params.id, req.body))

  app.delete('/v1/api/admin/registries/:id', {
    schema: {
      tags, operationId: 'deleteRegistry', summary: 'remove a registry (admin); when it was the default, the oldest remaining one becomes the default',
      params: RegistryParams, response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(401, 403, 404) },
    },
  }, async (req, reply) => {
    await service.delete(req.params.id)
    return reply.code(204).send(null)
  })

  app.post('/v1/api/admin/registries/:id/test', {
    schema: {
      tags, operationId: 'testRegistry',
      summary: 'Docker Registry v2 handshake with the stored credentials (admin); the outcome is stored and returned, a failing registry is status "error", not a failed request',
      params: RegistryParams, response: { 200: RegistryTestResult, ...errorResponses(401, 403, 404) },
    },
  }, async (req) => service.test(req.params.id))

  app.put('/v1/api/admin/registries/:id/default', {
    schema: {
      tags, operationId: 'setDefaultRegistry', summary: 'make it the default registry, and no other (admin)',
      params: RegistryParams, response: { 200: RegistryRef, ...errorResponses(401, 403, 404, 409) },
    },
  }, async (req) => service.setDefault(req.params.id))
}
