// Writes .env.example and the README's configuration table from the configuration schema, so neither can
// drift from the code (tests compare both).
import { readFileSync, writeFileSync } from 'node:fs'
import { renderEnvExample, renderReadmeTable, replaceReadmeTable } from '../src/config-docs.ts'

writeFileSync(new URL('../.env.example', import.meta.url), renderEnvExample())
const readmeUrl = new URL('../README.md', import.meta.url)
writeFileSync(readmeUrl, replaceReadmeTable(readFileSync(readmeUrl, 'utf8'), renderReadmeTable()))
process.stdout.write('wrote .env.example and the README configuration table\n')
