// Writes openapi.yaml from the registered routes (npm run openapi). The app is built on an in-memory
// embedded database so the script needs nothing running.
import { writeFileSync } from 'node:fs'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'

const app = await buildApp(loadConfig({ NODE_ENV: 'test', EMBEDDED_DB: 'memory', LOG_LEVEL: 'silent' }))
await app.ready()
writeFileSync(new URL('../openapi.yaml', import.meta.url), app.swagger({ yaml: true }))
await app.close()
process.stdout.write('wrote openapi.yaml\n')
