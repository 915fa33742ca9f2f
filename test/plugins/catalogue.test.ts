// The built-in catalogue is loaded at start-up, disabled, once: a restart on the same database neither
// duplicates it nor undoes an admin's enable or edit; an unedited built-in follows a newer catalogue.
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import { startTestDatabase } from '../helpers/database.ts'
import { BUILTIN_PLUGINS } from '../../src/services/plugin-catalogue/index.ts'
import { CrdPluginService } from '../../src/services/crd-plugin-service.ts'
import { PluginRepository } from '../../src/repositories/plugins.ts'

const database = await startTestDatabase(t)
const config = testConfig({ MONGODB_URI: database.uri, MONGODB_DB: database.dbName, CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *' })
const plugins = database.db.collection('plugins')

async function withApp<T>(fn: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<T>): Promise<T> {
  const app = await buildApp(config)
  try {
    await app.ready()
    return await fn(app)
  } finally {
    await app.close()
  }
}

t.test('start-up loads every catalogue entry, disabled and marked built-in', async (t) => {
  await withApp(async () => undefined)
  const docs = await plugins.find({}).toArray()
  t.equal(docs.length, BUILTIN_PLUGINS.length)
  t.ok(docs.every((d) => d.builtin === true && d.enabled === false))
})

t.test('a restart does not duplicate the catalogue and keeps what an admin enabled', async (t) => {
  const certId = await withApp(async (app) => {
    const cert = (await app.services.plugins.getForRender('cert-manager-certificate'))!
    await app.services.plugins.setEnabled(cert.id, true)
    return cert.id
  })
  await withApp(async (app) => {
    t.equal(await plugins.countDocuments({}), BUILTIN_PLUGINS.length, 'no duplicates')
    t.match(await app.services.plugins.getForRender('cert-manager-certificate'), { id: certId, enabled: true }, 'still enabled, same id')
    t.same((await app.services.plugins.listEnabled()).map((p) => p.name), ['cert-manager-certificate'])
  })
})

t.test('a newer catalogue refreshes unedited built-ins, never an admin\'s edit or enable state', async (t) => {
  const service = new CrdPluginService(new PluginRepository(database.db))
  const keda = BUILTIN_PLUGINS.find((p) => p.name === 'keda-prometheus-scaledobject')!
  const cert = BUILTIN_PLUGINS.find((p) => p.name === 'cert-manager-certificate')!
  const kedaId = (await service.getForRender(keda.name))!.id
  await service.setEnabled(kedaId, true)
  const stored = (await service.getForRender(cert.name))!
  const edited = await service.update(stored.id, { ...cert, display_name: 'Our certificates', version: stored.version })
  t.equal(edited.display_name, 'Our certificates')

  const newer = BUILTIN_PLUGINS.map((p) => (p === keda || p === cert) ? { ...p, description: `${p.description} (newer)`, version: '1.0.1' } : p)
  const report = await service.loadCatalogue(newer)
  t.same(report.refreshed, [keda.name], 'only the unedited built-in is refreshed')
  t.equal(report.inserted.length, 0)
  t.same(report.rejected, [])
  t.match(await service.getForRender(keda.name), { version: '1.0.1', description: /\(newer\)$/, enabled: true }, 'refreshed and still enabled')
  t.match(await service.getForRender(cert.name), { display_name: 'Our certificates', enabled: true }, 'the admin\'s edit stays')
  t.same((await service.loadCatalogue(newer)).refreshed, [], 'loading the same catalogue again changes nothing')
})

t.test('a broken catalogue entry is reported and skipped, the others still load', async (t) => {
  const service = new CrdPluginService(new PluginRepository(database.db))
  const broken = { ...BUILTIN_PLUGINS[0], name: 'broken-entry', template: '{{ .nope }}' }
  const report = await service.loadCatalogue([broken])
  t.match(report.rejected, [{ name: 'broken-entry', error: /\.nope/ }])
  t.equal(await plugins.countDocuments({ name: 'broken-entry' }), 0)
})
