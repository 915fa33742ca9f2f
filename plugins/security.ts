// Security headers and CORS. Any origin is allowed by default but never with credentials: the API uses
// bearer tokens, not cookies, so there is nothing for a browser to send on a user's behalf.
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'
import cors from '@fastify/cors'

export default fp(async (app) => {
  const origins = app.config.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean)
  const anyOrigin = origins.length === 0 || origins.includes('*')
  await app.register(cors, {
    origin: anyOrigin ? '*' : origins,
    credentials: !anyOrigin,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
    maxAge: 600,
  })
  await app.register(helmet, {
    global: true,
    // Swagger UI serves its own CSP (staticCSP); the API itself returns JSON only.
    contentSecurityPolicy: false,
    crossOriginResourcePolicy: { policy: anyOrigin ? 'cross-origin' : 'same-site' },
  })
}, { name: 'security', dependencies: ['config'] })
