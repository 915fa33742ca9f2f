// Builds the real app on the test database (embedded in memory, or MONGODB_URI), one per test file, and
// collects its log lines so tests can check what reaches the log.
import { Writable } from 'node:stream'
import { buildApp } from '../../src/app.ts'
import { testConfig, type Config } from '../../src/config.ts'
import type { App } from '../../src/app-types.ts'
import { startTestDatabase, type TestDatabase } from './database.ts'

export interface TestApp {
  app: App
  logs: string[]
  config: Config
}

interface Teardown { teardown(fn: () => unknown): void }

/**
 * `options.database`: the app joins a database another app of the test already uses (replicas of one service);
 * its owner closes it. The apps must then share JWT_SECRET and ENCRYPTION_KEY (overrides) to read each other's work.
 */
export async function startTestApp(t: Teardown, overrides: Parameters<typeof testConfig>[0] = {}, options: { database?: TestDatabase } = {}): Promise<TestApp & { database: TestDatabase }> {
  const database = options.database ?? await startTestDatabase()
  // Scheduled jobs are pushed out of the way (1 January): tests run them directly, when they mean to.
  // One app is one replica: shared mode (events, leases, claims through the database) is what the tests
  // under test/replicas/ ask for, and the multi-process ones get by default (MONGODB_URI set).
  const config = testConfig({
    LOG_LEVEL: 'info', MONGODB_URI: database.uri, MONGODB_DB: database.dbName, REPLICA_MODE: 'single',
    CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *', ...overrides,
  })
  const logs: string[] = []
  const logStream = new Writable({ write(chunk, _enc, done) { logs.push(String(chunk)); done() } })
  const app = await buildApp(config, { logStream })
  // The app's driver must disconnect before the database it talks to goes away.
  t.teardown(async () => { await app.close(); if (!options.database) await database.close() })
  await app.ready()
  return { app, logs, config, database }
}
