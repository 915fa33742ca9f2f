// Liveness, readiness and the landing page: the only routes outside /v1 besides the API documents.
import { Eta } from 'eta'
import { fileURLToPath } from 'node:url'
import type { App } from '../../app-types.ts'
import { HealthResponse, ReadyResponse } from '../../../schemas/system.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { APP_NAME, APP_VERSION } from '../../app-info.ts'
import { storageFailure, Unavailable } from '../../errors.ts'

const eta = new Eta({ views: fileURLToPath(new URL('../../views', import.meta.url)), autoEscape: true, cache: true })
const READY_TIMEOUT_MS = 5000

export default async function systemRoutes(app: App) {
  app.get('/healthz', {
    schema: { tags: ['system'], operationId: 'getHealth', summary: 'the process is alive', response: { 200: HealthResponse } },
  }, async () => ({ status: 'ok' as const, version: APP_VERSION, uptime_seconds: process.uptime() }))

  app.get('/readyz', {
    schema: { tags: ['system'], operationId: 'getReadiness', summary: 'the database answers and, after a refused write, stores changes again', response: { 200: ReadyResponse, ...errorResponses(503) } },
  }, async () => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS) })
    try {
      await Promise.race([app.db.command({ ping: 1 }), timeout])
      // Reads keep working on a full disk, so a ping alone would call a database ready that refuses every change.
      if (app.databaseWrites.failing) await Promise.race([app.databaseWrites.probe(), timeout])
    } catch (err) {
      throw new Unavailable(storageFailure(err)?.message ?? 'database unavailable')
    } finally {
      clearTimeout(timer)
    }
    return { status: 'ready' as const, database: 'ok' as const }
  })

  app.get('/', { schema: { hide: true } }, async (_req, reply) => {
    const html = await eta.renderAsync('landing', { name: APP_NAME, version: APP_VERSION })
    return reply.type('text/html; charset=utf-8').send(html)
  })
}
