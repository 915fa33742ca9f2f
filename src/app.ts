// The app factory: everything a running service is, except listening and signal handling (src/server.ts).
import Fastify from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.ts'
import { fastifyOptions, type BuildOptions } from './fastify-options.ts'
import type { App } from './app-types.ts'
import configPlugin from '../plugins/config.ts'
import errorsPlugin from '../plugins/errors.ts'
import securityPlugin from '../plugins/security.ts'
import rateLimitPlugin from '../plugins/rate-limit.ts'
import swaggerPlugin from '../plugins/swagger.ts'
import databasePlugin from '../plugins/database.ts'
import systemRoutes from './routes/system/index.ts'


export type { BuildOptions }

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  const app = Fastify(fastifyOptions(config, options)).withTypeProvider<TypeBoxTypeProvider>()

  await app.register(configPlugin, { config })
  await app.register(errorsPlugin)
  await app.register(securityPlugin)
  await app.register(rateLimitPlugin)
  await app.register(swaggerPlugin)
  await app.register(databasePlugin)

  await app.register(systemRoutes)
  return app as unknown as App
}
