// Differential test: every template of the corpus is rendered by Go's own text/template (go-ref/main.go)
// and by our engine; outputs must be byte for byte equal, and where Go fails ours must fail too.
import t from 'tap'
import { parseTemplate, TemplateError } from '../../src/templating/index.ts'
import { buildReference, goUnavailable, renderWithGo, type GoCase } from './go-reference.ts'
import { CORPUS, DATA, NOT_SUPPORTED } from './corpus.ts'

const skip = goUnavailable()

function ours(c: GoCase): { ok: true; output: string } | { ok: false; error: string } {
  try {
    return { ok: true, output: parseTemplate(c.template).execute(c.data) }
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e
    return { ok: false, error: e.message }
  }
}

t.test('the corpus renders byte for byte as Go text/template renders it', { skip: skip ?? false }, async (t) => {
  const cases: GoCase[] = CORPUS.map((template) => ({ template, data: DATA }))
  const go = renderWithGo(buildReference(), cases)
  t.equal(go.length, cases.length)
  let agreed = 0
  cases.forEach((c, i) => {
    const mine = ours(c)
    const ref = go[i]
    if (ref.ok) {
      if (mine.ok && mine.output === ref.output) agreed++
      else t.fail(`template ${JSON.stringify(c.template)}`, { expected: ref.output, actual: mine.ok ? mine.output : `error: ${mine.error}` })
    } else if (!mine.ok) agreed++
    else t.fail(`template ${JSON.stringify(c.template)} must fail as in Go (${ref.error})`, { actual: mine.output })
  })
  t.equal(agreed, cases.length, `${agreed}/${cases.length} templates agree with Go`)
  t.ok(go.filter((r) => r.ok).length > cases.length * 0.6, 'most of the corpus renders (it is not a corpus of errors)')
})

t.test('constructs left out on purpose are refused with a clear error, never misrendered', async (t) => {
  for (const template of NOT_SUPPORTED) {
    t.throws(() => parseTemplate(template), { name: 'TemplateError', message: /not supported/ }, template)
  }
})
