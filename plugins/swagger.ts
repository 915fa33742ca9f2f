// The OpenAPI document is generated from the registered route schemas; `npm run openapi` writes it to
// openapi.yaml and a test fails when the committed file is stale.
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { APP_NAME, APP_VERSION, APP_DESCRIPTION } from '../src/app-info.ts'

export default fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: APP_NAME, version: APP_VERSION, description: APP_DESCRIPTION, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
      servers: [{ url: '/', description: 'this server; every API path starts with /v1' }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    refResolver: {
      // Shared schemas keep their $id as their component name.
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { deepLinking: true } })

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_req, reply) => reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })))
}, { name: 'swagger', dependencies: ['schemas'] })
