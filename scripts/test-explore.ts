// Wider randomized run of the property-based tests (npm run test:explore): CI always uses the fixed seed
// of test/helpers/seed.ts; this runs every test file that uses it with fresh random seeds and more runs
// per property, printing each seed so a failure can be replayed with FC_SEED=<seed> npx tap <file>.
//   npm run test:explore                   3 rounds, runs ×5
//   npm run test:explore -- --rounds 10 --factor 20
//   npm run test:explore -- --seed 123 test/templating/fuzz.test.ts
import { spawnSync } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '3' }, factor: { type: 'string', default: '5' }, seed: { type: 'string' } },
})

function propertyTests(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...propertyTests(path))
    else if (entry.name.endsWith('.test.ts') && readFileSync(path, 'utf8').includes('helpers/seed.ts')) out.push(path)
  }
  return out.sort()
}

const files = positionals.length > 0 ? positionals : propertyTests('test')
const rounds = values.seed !== undefined ? 1 : Number(values.rounds)
const failed: string[] = []
for (let round = 0; round < rounds; round++) {
  const seed = values.seed ?? String(randomInt(0, 2 ** 31 - 1))
  console.log(`\n=== round ${round + 1}/${rounds}: FC_SEED=${seed} FC_RUNS_FACTOR=${values.factor} (${files.length} files)`)
  const result = spawnSync('npx', ['tap', '--reporter=terse', ...files], {
    stdio: 'inherit',
    env: { ...process.env, FC_SEED: seed, FC_RUNS_FACTOR: values.factor },
  })
  if (result.status !== 0) failed.push(seed)
}
if (failed.length > 0) {
  console.log(`\nfailed with seeds: ${failed.join(', ')} — replay one with FC_SEED=<seed> FC_RUNS_FACTOR=${values.factor} npx tap <file>`)
  process.exit(1)
}
console.log(`\nall ${rounds} rounds passed`)
