// Random differential test: templates generated from the grammar (every construct, random printf
// formats, wrong arities and types) are rendered by Go's text/template and by ours; both must agree.
import t from 'tap'
import fc from 'fast-check'
import { parseTemplate, TemplateError } from '../../src/templating/index.ts'
import { buildReference, goUnavailable, renderWithGo } from './go-reference.ts'
import { DATA, templateArb } from './arbitraries.ts'

const skip = goUnavailable()
const RUNS = Number(process.env.TEMPLATE_DIFF_RUNS ?? 600)

t.test(`${RUNS} generated templates render exactly as in Go`, { skip: skip ?? false }, async (t) => {
  const seed = Number(process.env.TEMPLATE_FUZZ_SEED ?? Date.now() % 2 ** 31)
  const templates = fc.sample(templateArb, { numRuns: RUNS, seed })
  const go = renderWithGo(buildReference(), templates.map((template) => ({ template, data: DATA })))
  let rendered = 0
  const mismatches: { template: string; go: string; ours: string }[] = []
  templates.forEach((template, i) => {
    let ours: string
    let ok: boolean
    try {
      ours = parseTemplate(template).execute(DATA)
      ok = true
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e
      ours = `error: ${e.message}`
      ok = false
    }
    const ref = go[i]
    if (ref.ok) rendered++
    if (ref.ok ? !(ok && ours === ref.output) : ok) {
      mismatches.push({ template, go: ref.ok ? ref.output : `error: ${ref.error}`, ours })
    }
  })
  for (const m of mismatches.slice(0, 5)) t.fail(`differs from Go: ${JSON.stringify(m.template)}`, { go: m.go, ours: m.ours })
  t.equal(mismatches.length, 0, `seed ${seed} (set TEMPLATE_FUZZ_SEED to replay): ${mismatches.length} mismatches`)
  t.ok(rendered > RUNS / 4, `${rendered}/${RUNS} generated templates render in Go (the rest fail on both sides)`)
})
