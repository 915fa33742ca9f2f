// Random differential test: templates generated from the grammar (every construct, random printf
// formats, wrong arities and types) are rendered by Go's text/template and by ours; both must agree.
import t from 'tap'
import fc from 'fast-check'
import { SEED, runs } from '../helpers/seed.ts'
import { parseTemplate, TemplateError } from '../../src/templating/index.ts'
import { buildReference, goUnavailable, renderWithGo } from './go-reference.ts'
import { DATA, dataArb, noiseArb, templateArb } from './arbitraries.ts'

const skip = goUnavailable()
const RUNS = runs(Number(process.env.TEMPLATE_DIFF_RUNS ?? 600))

// Random values under the corpus's keys, normalized through JSON as the Go side receives them.
const randomData: fc.Arbitrary<unknown> = fc.dictionary(fc.constantFrom(...Object.keys(DATA)), dataArb, { maxKeys: 6 })
  .map((d) => JSON.parse(JSON.stringify({ ...DATA, ...d })) as unknown)

const cases: { what: string; arb: fc.Arbitrary<string>; data?: fc.Arbitrary<unknown>; minRendered: number }[] = [
  { what: 'generated templates', arb: templateArb, minRendered: 0.25 },
  { what: 'generated templates over random data', arb: templateArb, data: randomData, minRendered: 0.1 },
  { what: 'token-noise templates (lexer and parser edge cases)', arb: noiseArb, minRendered: 0.05 },
  { what: 'token-noise actions', arb: fc.tuple(noiseArb, noiseArb).map(([a, b]) => `{{${a}}}${b}`), minRendered: 0.01 },
]

for (const { what, arb, data, minRendered } of cases) t.test(`${RUNS} ${what} render exactly as in Go`, { skip: skip ?? false }, async (t) => {
  // The shared fixed seed keeps CI deterministic; FC_SEED explores others. Known open difference: whole
  // numbers beyond 2^53 in the data (JSON parses them to the nearest double, Go keeps the int64) print differently.
  const seed = SEED
  const templates = fc.sample(arb, { numRuns: RUNS, seed })
  const datas = data === undefined ? templates.map(() => DATA as unknown) : fc.sample(data, { numRuns: RUNS, seed: seed + 1 })
  const go = renderWithGo(buildReference(), templates.map((template, i) => ({ template, data: datas[i] })))
  let rendered = 0
  const mismatches: { template: string; go: string; ours: string }[] = []
  templates.forEach((template, i) => {
    let ours: string
    let ok: boolean
    try {
      ours = parseTemplate(template).execute(datas[i])
      ok = true
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e
      ours = `error: ${e.message}`
      ok = false
    }
    const ref = go[i]
    if (ref.ok) rendered++
    if (ref.ok ? !(ok && ours === ref.output) : ok) {
      mismatches.push({ template: data === undefined ? template : `${template}  with data ${JSON.stringify(datas[i])}`, go: ref.ok ? ref.output : `error: ${ref.error}`, ours })
    }
  })
  for (const m of mismatches.slice(0, 5)) t.fail(`differs from Go: ${JSON.stringify(m.template)}`, { go: m.go, ours: m.ours })
  t.equal(mismatches.length, 0, `seed ${seed} (set FC_SEED to replay): ${mismatches.length} mismatches`)
  t.ok(rendered > RUNS * minRendered, `${rendered}/${RUNS} render in Go (the rest fail on both sides)`)
})
