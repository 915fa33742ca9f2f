// Issue 22, item 1: nothing a compose import sends can hold the event loop. Each input below once froze the
// service (a quadratic URL-password regex over every environment value, interpolation expanding without
// bound, analysis on the event loop); each is now analysed on a worker thread within its limits, while
// GET /healthz, probed over real HTTP, answers within 200 ms throughout.
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { importFixture } from './fixture.ts'
import { whileProbing, withinBudget } from '../helpers/latency-probe.ts'
import { hasUrlPassword } from '../../src/services/import/names.ts'
import { MAX_EXPANSION_CHARS } from '../../src/services/import/interpolate.ts'
import { MAX_SERVICES } from '../../src/services/import/load.ts'
import { MAX_COMPOSE_BYTES } from '../../schemas/import-analysis.ts'

// Longer than the suite's 120 s per file: each case may be measured up to three times (withinBudget).
t.setTimeout(300_000)

const HEALTHZ_BUDGET_MS = 200

const f = await importFixture(t, { BODY_LIMIT_BYTES: 4 * 1024 * 1024 })
const { owner } = f

/** Analyses `body` while probing /healthz; answers the finished session. */
async function analyzeProbed(t: Test, name: string, body: Record<string, unknown>) {
  const { result: session, latency, worstPerAttempt } = await withinBudget(HEALTHZ_BUDGET_MS, () => whileProbing(f.base, async () => {
    const started = await f.analyze(owner, { source: 'compose', ...body })
    if (started.status !== 201) return { status: `refused ${started.status}`, error: started.body?.error }
    return f.finished(owner, started.body.id)
  }))
  t.comment(`${name}: worst /healthz ${worstPerAttempt.map((ms) => ms.toFixed(1)).join(' ms, then ')} ms (attempts); best over ${latency.count} probes; the import ${session.status}${session.error ? ` (${session.error})` : ''}`)
  t.same(latency.failures, [], 'every /healthz answered')
  t.ok(latency.worstMs < HEALTHZ_BUDGET_MS, `${name}: /healthz answered within ${HEALTHZ_BUDGET_MS} ms throughout (worst ${latency.worstMs.toFixed(1)} ms)`)
  return session
}

const yamlString = (s: string) => JSON.stringify(s)
const service = (name: string, env: Record<string, string>) =>
  `  ${name}:\n    image: nginx:1.27\n    environment:\n${Object.entries(env).map(([k, v]) => `      ${k}: ${yamlString(v)}`).join('\n')}\n`

// Warm the pool first: the first job also starts a thread (and, under tsx, compiles its modules), which
// says nothing about what an input costs.
t.before(async () => {
  const started = await f.analyze(owner, { source: 'compose', content: `services:\n${service('warm', { A: 'b' })}` })
  await f.finished(owner, started.body.id)
})

t.test('the URL-password check is linear and agrees with the pattern it replaces', async (t) => {
  // The old pattern, kept here only as the oracle, on short strings where its cost does not matter.
  const OLD = /[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@/i
  fc.assert(fc.property(fc.string({ unit: fc.constantFrom('a', 'B', '1', '+', '.', '-', ':', '/', '@', ' ', '\t', 'x', '%'), maxLength: 40 }), (s) => hasUrlPassword(s) === OLD.test(s)), { seed: 2201, numRuns: 5000 })
  for (const s of ['postgres://user:secret@db/app', 'redis://:pw@cache:6379', 'h2://a:b@c', 'x http://u:p@h y']) t.ok(hasUrlPassword(s), s)
  for (const s of ['postgres://user@db/app', 'http://host:8080/path', 'mailto:a@b', '1://u:p@h', 'http://u:@h']) t.notOk(hasUrlPassword(s), s)
  // Inputs that made the pattern backtrack: ~1 MB each, checked in well under a second.
  for (const s of ['a'.repeat(MAX_COMPOSE_BYTES), 'a:'.repeat(MAX_COMPOSE_BYTES / 2), 'a://'.repeat(MAX_COMPOSE_BYTES / 4), 'a://:'.repeat(MAX_COMPOSE_BYTES / 5), '1'.repeat(MAX_COMPOSE_BYTES) + '://u:p@h']) {
    const started = performance.now()
    hasUrlPassword(s)
    const ms = performance.now() - started
    t.ok(ms < 500, `${JSON.stringify(s.slice(0, 6))}… (${s.length} chars) checked in ${ms.toFixed(1)} ms`)
  }
})

t.test('a 128,000-character environment value', async (t) => {
  const session = await analyzeProbed(t, 'one 128,000-character value', { content: `services:\n${service('web', { LONG: 'a'.repeat(128_000) })}` })
  t.equal(session.status, 'completed')
})

t.test('50 lines interpolating a 128,000-character variable: refused, naming the limit', async (t) => {
  const env = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`V${i}`, '${BIG}']))
  const session = await analyzeProbed(t, '50 interpolated lines (6.4 MB expanded)', { content: `services:\n${service('web', env)}`, env_file: `BIG=${'a'.repeat(128_000)}\n` })
  t.equal(session.status, 'failed')
  t.match(session.error, new RegExp(`more than ${MAX_EXPANSION_CHARS} characters \\(the limit for one analysis\\)`))
})

t.test('a 4,000-line file of long values', async (t) => {
  const env = Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`K${i}`, `${'a'.repeat(200)}${i % 2 ? '://' : ':'}${'b'.repeat(20)}`]))
  const content = `services:\n${service('web', env)}`
  t.ok(Buffer.byteLength(content) <= MAX_COMPOSE_BYTES && content.split('\n').length > 4000, 'within the size limit, over 4,000 lines')
  const session = await analyzeProbed(t, '4,000 lines', { content })
  t.equal(session.status, 'completed')
})

t.test('the largest accepted file (1,000 services) and one over the limit', async (t) => {
  const file = (n: number) => `services:\n${Array.from({ length: n }, (_, i) => service(`svc${i}`, { PORT: String(8000 + (i % 1000)), URL: `http://svc${(i + 1) % n}:8080/` })).join('')}`
  const largest = await analyzeProbed(t, `${MAX_SERVICES} services`, { content: file(MAX_SERVICES) })
  t.equal(largest.status, 'completed')
  t.equal(largest.analysis.services.length, MAX_SERVICES)
  const over = await analyzeProbed(t, '1,750 services', { content: file(1750) })
  t.equal(over.status, 'failed')
  t.match(over.error, `defines 1750 services; at most ${MAX_SERVICES} are accepted`)
})

t.test('generated inputs: long values, many lines, deep interpolation', async (t) => {
  // A fixed seed: the same inputs on every run (FUZZ_SEED explores others).
  const seed = Number(process.env.FUZZ_SEED ?? 22)
  const pieces = ['a', 'a:', 'a://', 'u:p', '@', '${A}', '$$', ':-', '/', ' ', '1', '+']
  const samples = fc.sample(fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 6 }), { seed, numRuns: 4 })
  for (const [i, unit] of samples.entries()) {
    const motif = unit.join('')
    const value = motif.repeat(Math.floor(200_000 / motif.length))
    const session = await analyzeProbed(t, `long value of ${JSON.stringify(motif)} × ${Math.floor(200_000 / motif.length)}`, { content: `services:\n${service(`s${i}`, { V: value })}`, env: { A: 'x'.repeat(64) } })
    t.ok(['completed', 'failed'].includes(session.status), 'the analysis ends')
  }

  const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`E${i}`, i % 3 ? `http://u${i}:p@h/${i}` : '${A:-x}']))
  const manyLines = await analyzeProbed(t, '10,000 environment lines', { content: `services:\n${service('web', many)}` })
  t.equal(manyLines.status, 'completed')

  const nested = (depth: number) => `${'${A:-'.repeat(depth)}end${'}'.repeat(depth)}`
  const deep = await analyzeProbed(t, '2,000 lines nested 20 deep', { content: `services:\n${service('web', Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`D${i}`, nested(20)])))}` })
  t.equal(deep.status, 'completed')
  const tooDeep = await analyzeProbed(t, 'nested 21 deep', { content: `services:\n${service('web', { D: nested(21) })}` })
  t.equal(tooDeep.status, 'failed')
  t.match(tooDeep.error, 'more than 20 nested')

  // Each line doubles the last: 2^30 characters by the end, unless the expansion is bounded.
  const doubling = ['A0=aaaaaaaaaaaaaaaa', ...Array.from({ length: 30 }, (_, i) => `A${i + 1}=\${A${i}}\${A${i}}`)].join('\n')
  const doubled = await analyzeProbed(t, 'a .env doubling its value 30 times', { content: `services:\n${service('web', { X: '${A30}' })}`, env_file: doubling })
  t.equal(doubled.status, 'failed')
  t.match(doubled.error, `more than ${MAX_EXPANSION_CHARS} characters`)
})
