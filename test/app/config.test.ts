import t from 'tap'
import { readFileSync } from 'node:fs'
import { loadConfig, ConfigError, ConfigSchema } from '../../src/config.ts'
import { renderEnvExample, renderConfigTable, replaceConfigTable } from '../../src/config-docs.ts'

t.test('defaults serve on port 3000 with the embedded database on disk', async (t) => {
  const c = loadConfig({})
  t.equal(c.PORT, 3000)
  t.equal(c.HOST, '0.0.0.0')
  t.equal(c.MONGODB_URI, undefined)
  t.equal(c.EMBEDDED_DB, 'disk')
  t.equal(c.DATA_DIR, './data')
  t.equal(c.BODY_LIMIT_BYTES, 1_048_576)
})

t.test('values are converted from strings', async (t) => {
  const c = loadConfig({ PORT: '8080', TRUST_PROXY: 'true', EMBEDDED_DB: 'memory', MONGODB_URI: 'mongodb://db:27017' })
  t.equal(c.PORT, 8080)
  t.equal(c.TRUST_PROXY, true)
  t.equal(c.EMBEDDED_DB, 'memory')
  t.equal(c.MONGODB_URI, 'mongodb://db:27017')
})

t.test('a bad value is one line naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: '99999' }, /^Invalid configuration: PORT must be <= 65535 \(got "99999"\)$/],
    [{ PORT: 'abc' }, /^Invalid configuration: PORT /],
    [{ EMBEDDED_DB: 'floppy' }, /^Invalid configuration: EMBEDDED_DB /],
    [{ LOG_LEVEL: 'loud' }, /^Invalid configuration: LOG_LEVEL /],
  ]
  for (const [env, message] of cases) {
    const err = t.throws(() => loadConfig(env)) as Error
    t.type(err, ConfigError)
    t.match(err.message, message)
    t.notMatch(err.message, /\n/)
  }
})

t.test('a bad secret-bearing value is named but not echoed', async (t) => {
  const err = t.throws(() => loadConfig({ MONGODB_URI: 'postgres://admin:hunter2@db' })) as Error
  t.match(err.message, /MONGODB_URI/)
  t.notMatch(err.message, /hunter2/)
})

t.test('.env.example lists every variable with its default', async (t) => {
  const committed = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
  t.equal(committed, renderEnvExample(), '.env.example is current (run: node --import tsx scripts/env-example.ts)')
})

t.test('the configuration table of docs/configuration.md is current', async (t) => {
  const guide = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
  t.equal(guide, replaceConfigTable(guide, renderConfigTable()), 'the table is stale (run: node --import tsx scripts/env-example.ts)')
  for (const name of Object.keys(ConfigSchema.properties)) t.match(guide, new RegExp('\\| `' + name + '` \\|'), name)
})
