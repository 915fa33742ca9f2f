// Plugins (spec "Plugins", "Plugin enablement"; API.md §6). Plugins are global: every signed-in user reads
// them; registering, editing, enabling and disabling need the admin role, which plugins/auth.ts enforces
// for routes marked `requireAdmin` (before the body is even looked at, so a plain user learns nothing).
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { Type } from 'typebox'
import {
  CreatePluginBody, UpdatePluginBody, PluginParams, PluginListQuery, PluginList, EnabledPluginList, CategoryList,
} from '../../../schemas/plugin.ts'
import { pageReply } from '../../repositories/pagination.ts'

const tags = ['plugins']
const PluginRef = Type.Ref('Plugin')
const admin = { requireAdmin: true }

export default async function pluginRoutes(app: App) {
  const service = app.services.plugins

  app.post('/v1/api/plugins', {
    config: admin,
    schema: {
      tags, operationId: 'registerPlugin',
      summary: 'register a plugin (admin); validated fully (fields, template, a rendered sample matching crd) and disabled until enabled',
      body: CreatePluginBody, response: { 201: PluginRef, ...errorResponses(400, 401, 403, 409) },
    },
  }, async (req, reply) => reply.code(201).send(await service.register(req.body)))

  app.get('/v1/api/plugins', {
    schema: {
      tags, operationId: 'listPlugins', summary: 'all plugins, enabled or not (search matches name, display name and description)',
      querystring: PluginListQuery, response: { 200: PluginList, ...errorResponses(400, 401) },
    },
  }, async (req) => {
    const { category, enabled, ...page } = req.query
    return pageReply('plugins', await service.list(page, { category, enabled }))
  })

  // Static segments outrank `:id` in the router, so "enabled" and "categories" are never taken for ids.
  app.get('/v1/api/plugins/enabled', {
    schema: {
      tags, operationId: 'listEnabledPlugins', summary: 'the enabled plugins: the node types the canvas offers',
      response: { 200: EnabledPluginList, ...errorResponses(401) },
    },
  }, async () => ({ plugins: await service.listEnabled() }))

  app.get('/v1/api/plugins/categories', {
    schema: {
      tags, operationId: 'listPluginCategories', summary: 'the allowed plugin categories',
      response: { 200: CategoryList, ...errorResponses(401) },
    },
  }, async () => service.categories())

  app.get('/v1/api/plugins/:id', {
    schema: {
      tags, operationId: 'getPlugin', summary: 'one plugin', params: PluginParams, response: { 200: PluginRef, ...errorResponses(401, 404) },
    },
  }, async (req) => service.get(req.params.id))

  app.put('/v1/api/plugins/:id', {
    config: admin,
    schema: {
      tags, operationId: 'updatePlugin',
      summary: 'replace a plugin\'s definition (admin), validated like a registration; version: minor +1 when config_fields change, patch +1 when only the template does',
      params: PluginParams, body: UpdatePluginBody, response: { 200: PluginRef, ...errorResponses(400, 401, 403, 404, 409) },
    },
  }, async (req) => service.update(req.params.id, req.body))

  app.post('/v1/api/plugins/:id/enable', {
    config: admin,
    schema: {
      tags, operationId: 'enablePlugin', summary: 'enable a plugin (admin): its node type joins the palette (GET /templates); enabling an enabled plugin changes nothing',
      params: PluginParams, response: { 200: PluginRef, ...errorResponses(401, 403, 404) },
    },
  }, async (req) => service.setEnabled(req.params.id, true))

  app.post('/v1/api/plugins/:id/disable', {
    config: admin,
    schema: {
      tags, operationId: 'disablePlugin',
      summary: 'disable a plugin (admin): its node type leaves the palette, and its nodes fail to render until it is enabled again',
      params: PluginParams, response: { 200: PluginRef, ...errorResponses(401, 403, 404) },
    },
  }, async (req) => service.setEnabled(req.params.id, false))
}
