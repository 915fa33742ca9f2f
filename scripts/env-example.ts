// Writes .env.example from the configuration schema, so the list of variables cannot drift from the code.
import { writeFileSync } from 'node:fs'
import { renderEnvExample } from '../src/config-docs.ts'

writeFileSync(new URL('../.env.example', import.meta.url), renderEnvExample())
process.stdout.write('wrote .env.example\n')
