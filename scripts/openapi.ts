// Writes openapi.yaml from the registered routes (npm run openapi), and the command-line client's types
// generated from it (src/cli/api/openapi.ts), so the client can never ask for a shape the API does not have.
// The app is built on an in-memory embedded database so the script needs nothing running.
import { writeFileSync } from 'node:fs'
import openapiTS, { astToString } from 'openapi-typescript'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { cliTypesHeader } from '../src/cli/api/header.ts'

const app = await buildApp(loadConfig({ NODE_ENV: 'test', EMBEDDED_DB: 'memory', LOG_LEVEL: 'silent' }))
await app.ready()
const yaml = app.swagger({ yaml: true })
await app.close()
writeFileSync(new URL('../openapi.yaml', import.meta.url), yaml)
writeFileSync(new URL('../src/cli/api/openapi.ts', import.meta.url), cliTypesHeader + astToString(await openapiTS(yaml)))
process.stdout.write('wrote openapi.yaml and src/cli/api/openapi.ts\n')
