// The composition root of the domain: repositories on the app's database, services on the repositories
// and the bus. Routes reach services only through `app.services`.
import fp from 'fastify-plugin'
import { WorkflowRepository } from '../src/repositories/workflows.ts'
import { VersionRepository } from '../src/repositories/versions.ts'
import { RunRepository } from '../src/repositories/runs.ts'
import { WorkflowService } from '../src/services/workflow-service.ts'
import { StatsRepository } from '../src/repositories/stats.ts'
import { StatsService } from '../src/services/stats-service.ts'
import { SearchService } from '../src/services/search-service.ts'
import { builtInTemplates } from '../src/services/node-catalogue.ts'

export interface Services {
  workflows: WorkflowService
  stats: StatsService
  search: SearchService
}

declare module 'fastify' {
  interface FastifyInstance { services: Services }
}

export default fp(async (app) => {
  const { db, bus } = app
  const workflows = new WorkflowRepository(db)
  const services: Services = {
    workflows: new WorkflowService({ workflows, versions: new VersionRepository(db), runs: new RunRepository(db), bus }),
    stats: new StatsService(new StatsRepository(db), bus),
    search: new SearchService(db, builtInTemplates),
  }
  app.decorate('services', services)
  services.stats.start(app.config.STATS_REFRESH_CRON)
  // Background work stops before the database closes (the database plugin's hook runs after this one).
  app.addHook('onClose', async () => services.stats.stop())
}, { name: 'services', dependencies: ['database', 'events'] })
