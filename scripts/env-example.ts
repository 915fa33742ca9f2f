// Writes .env.example and the configuration table of docs/configuration.md from the configuration schema,
// so neither can drift from the code (tests compare both).
import { readFileSync, writeFileSync } from 'node:fs'
import { renderEnvExample, renderConfigTable, replaceConfigTable } from '../src/config-docs.ts'

writeFileSync(new URL('../.env.example', import.meta.url), renderEnvExample())
const guideUrl = new URL('../docs/configuration.md', import.meta.url)
writeFileSync(guideUrl, replaceConfigTable(readFileSync(guideUrl, 'utf8'), renderConfigTable()))
process.stdout.write('wrote .env.example and the configuration table of docs/configuration.md\n')
