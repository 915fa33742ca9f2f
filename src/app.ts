// The app factory: everything a running service is, except listening and signal handling (src/server.ts).
import type { Http2SecureServer } from 'node:http2'
import Fastify from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.ts'
import { fastifyOptions, http1Limits, stallLimits, tlsServerOptions, type BuildOptions } from './fastify-options.ts'
import { serverTls } from './tls/server-tls.ts'
import { closeSessionsOnShutdown } from './tls/http2-sessions.ts'
import { validatorCompiler } from './validation.ts'
import { guardStalledClients } from './stalled-clients.ts'
import type { App } from './app-types.ts'
import configPlugin from '../plugins/config.ts'
import errorsPlugin from '../plugins/errors.ts'
import securityPlugin from '../plugins/security.ts'
import rateLimitPlugin from '../plugins/rate-limit.ts'
import schemasPlugin from '../plugins/schemas.ts'
import swaggerPlugin from '../plugins/swagger.ts'
import databasePlugin from '../plugins/database.ts'
import authPlugin from '../plugins/auth.ts'
import eventsPlugin from '../plugins/events.ts'
import servicesPlugin from '../plugins/services.ts'
import websocketPlugin from '../plugins/websocket.ts'
import systemRoutes from './routes/system/index.ts'
import authRoutes from './routes/auth/index.ts'
import profileRoutes from './routes/profile/index.ts'
import settingsRoutes from './routes/settings/index.ts'
import workflowRoutes from './routes/workflows/index.ts'
import manifestRoutes from './routes/workflows/manifests.ts'
import diagnosticsRoutes from './routes/workflows/diagnostics.ts'
import runRoutes from './routes/workflows/run.ts'
import rollbackRoutes from './routes/workflows/rollback.ts'
import driftRoutes from './routes/workflows/drift.ts'
import versionRoutes from './routes/versions/index.ts'
import templateRoutes from './routes/templates/index.ts'
import dashboardRoutes from './routes/dashboard/index.ts'
import searchRoutes from './routes/search/index.ts'
import clusterRoutes from './routes/clusters/index.ts'
import metricsRoutes from './routes/metrics/index.ts'
import registryRoutes from './routes/registries/index.ts'
import pluginRoutes from './routes/plugins/index.ts'
import resourceRoutes from './routes/resources/index.ts'
import streamsPlugin from '../plugins/streams.ts'
import workflowStreamRoutes from './routes/workflows/stream.ts'
import resourceStreamRoutes from './routes/resources/stream.ts'
import terminalRoutes from './routes/resources/terminal.ts'
import logRoutes from './routes/resources/logs.ts'
import buildRoutes from './routes/builds/index.ts'
import importRoutes from './routes/import/index.ts'
import notificationRoutes from './routes/notifications/index.ts'
import channelRoutes from './routes/notifications/channels.ts'
import auditRoutes from './routes/audit/index.ts'
import kubeorchAdapter, { KUBEORCH_PREFIX } from './compat/kubeorch/index.ts'

export type { BuildOptions }

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  const tls = await serverTls(config)
  const serverOptions = fastifyOptions(config, options)
  // With TLS the raw server is Node's secure HTTP/2 server (allowHTTP1); routes see the same request and
  // reply API either way, so the app keeps the default server's types.
  const app = Fastify((tls ? { ...serverOptions, ...tlsServerOptions(config, tls) } : serverOptions) as typeof serverOptions).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  if (tls) {
    http1Limits(app.server, config)
    closeSessionsOnShutdown(app.server as unknown as Http2SecureServer, (close) => app.addHook('preClose', (done) => { close(); done() }))
    app.log.info({ certificate: tls.certFile, fingerprint: tls.fingerprint, source: tls.source }, `HTTPS with HTTP/2 and HTTP/1.1; certificate SHA-256 fingerprint ${tls.fingerprint}`)
  }
  guardStalledClients(app.server, stallLimits(config))

  await app.register(configPlugin, { config })
  await app.register(errorsPlugin)
  await app.register(securityPlugin)
  await app.register(rateLimitPlugin)
  await app.register(schemasPlugin)
  await app.register(swaggerPlugin)
  await app.register(databasePlugin)
  // Before auth: its request hook marks upgrade requests, so one refused by auth (401) still has its socket closed.
  await app.register(websocketPlugin)
  await app.register(authPlugin)
  await app.register(eventsPlugin)
  await app.register(servicesPlugin)
  await app.register(import('../plugins/audit.ts')) // the audit log's request hook (API.md §12): before the routes, so it sees each one
  await app.register(streamsPlugin)

  await app.register(systemRoutes)
  await app.register(authRoutes, { prefix: '/v1/api/auth' })
  await app.register(profileRoutes, { prefix: '/v1/api/profile' })
  await app.register(settingsRoutes, { prefix: '/v1/api/settings' })
  await app.register(workflowRoutes)
  await app.register(manifestRoutes)
  await app.register(diagnosticsRoutes)
  await app.register(runRoutes)
  await app.register(rollbackRoutes)
  await app.register(driftRoutes)
  await app.register(versionRoutes)
  await app.register(templateRoutes)
  await app.register(dashboardRoutes)
  await app.register(searchRoutes)
  await app.register(clusterRoutes)
  await app.register(metricsRoutes)
  await app.register(registryRoutes)
  await app.register(pluginRoutes)
  await app.register(resourceRoutes)
  await app.register(workflowStreamRoutes)
  await app.register(resourceStreamRoutes)
  await app.register(terminalRoutes)
  await app.register(logRoutes)
  await app.register(buildRoutes)
  await app.register(importRoutes)
  await app.register(notificationRoutes)
  await app.register(channelRoutes)
  await app.register(auditRoutes)
  if (config.KUBEORCH_UI_COMPAT) await app.register(kubeorchAdapter, { prefix: KUBEORCH_PREFIX })
  return app as unknown as App
}
