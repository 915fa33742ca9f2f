// Hostile templates and values: each is refused (TemplateError / ManifestTemplateError naming the
// limit) or rendered, within a bounded time, and never with a RangeError or a hang. The bounds are
// generous (the machine may be busy); what they catch is seconds of work and super-linear growth.
import t from 'tap'
import { parseTemplate, renderManifestTemplate, TemplateError, ManifestTemplateError, DEFAULT_LIMITS, MAX_SOURCE_LENGTH } from '../../src/templating/index.ts'
import { MAX_FLOW_DEPTH } from '../../src/templating/manifest.ts'

const HEAD = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n'

function timed<T>(f: () => T): { ms: number; result?: T; error?: unknown } {
  const started = performance.now()
  try {
    const result = f()
    return { ms: performance.now() - started, result }
  } catch (error) {
    return { ms: performance.now() - started, error }
  }
}

t.test('a value repeated by range counts toward the output limit in a manifest (it is not the short placeholder)', async (t) => {
  // Before: 5,000 placeholders (~150 kB) passed the 1 MiB limit while each stood for 200 kB of text:
  // 14 s of string building, then a RangeError.
  const tpl = parseTemplate(`${HEAD}data:\n  x: "{{ range .l }}{{ $.s }}{{ $.s }}{{ end }}"\n`)
  const run = timed(() => renderManifestTemplate(tpl, { s: 'y'.repeat(100_000), l: Array(5000).fill(0) }))
  t.ok(run.error instanceof TemplateError, String(run.error))
  t.match((run.error as Error).message, /output larger than 1048576 bytes/)
  t.ok(run.ms < 2000, `refused in ${Math.round(run.ms)} ms`)
  const [doc] = renderManifestTemplate(tpl, { s: 'y'.repeat(1000), l: Array(10).fill(0) })
  t.equal(((doc.data as Record<string, string>).x).length, 20_000, 'under the limit the value is rendered whole')
  t.throws(() => renderManifestTemplate(tpl, { s: 'y'.repeat(600), l: [0] }, { maxOutputBytes: 1000 }), /output larger than 1000 bytes/, 'the limit is the caller\'s')
})

t.test('flow collections nested past the limit are refused before the YAML parser recurses into them', async (t) => {
  const tpl = parseTemplate(`${HEAD}data:\n  x: {{ range .l }}[{{ end }}{{ range .l }}]{{ end }}\n`)
  // 100,000 levels (allowed by these limits): the YAML parser took 1.4 s and overflowed the stack.
  const run = timed(() => renderManifestTemplate(tpl, { l: Array(100_000).fill(0) }, { maxRangeIterations: 200_000 }))
  t.ok(run.error instanceof ManifestTemplateError, String(run.error))
  t.match((run.error as Error).message, new RegExp(`deeper than ${MAX_FLOW_DEPTH} levels`))
  t.ok(run.ms < 1000, `refused in ${Math.round(run.ms)} ms`)
  const fine = parseTemplate(`${HEAD}x: ${'['.repeat(20)}1${']'.repeat(20)}\n`)
  t.same(renderManifestTemplate(fine, {})[0].x, JSON.parse(`${'['.repeat(20)}1${']'.repeat(20)}`), 'ordinary nesting renders')
})

t.test('deep block nesting is bounded by the template length and parses quickly', async (t) => {
  // Printed values are placeholders until the YAML is parsed, so only the template's own text indents:
  // n levels take about n²/2 characters of it, and MAX_SOURCE_LENGTH allows some 700.
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(i + 1)}-`).join('\n')
  const tpl = parseTemplate(`${HEAD}x:\n${lines(700)}\n${' '.repeat(701)}{{ .v }}\n`)
  const run = timed(() => renderManifestTemplate(tpl, { v: 1 }))
  t.equal(run.error, undefined)
  let leaf: unknown = run.result?.[0].x
  let depth = 0
  while (Array.isArray(leaf)) [leaf, depth] = [leaf[0], depth + 1]
  t.same([leaf, depth], [1, 700])
  t.ok(run.ms < 2000, `${Math.round(run.ms)} ms`)
  t.throws(() => parseTemplate(`${HEAD}x:\n${lines(800)}\n`), /template longer than/, 'deeper needs more than the source limit')
})

t.test('template calls that fan out exponentially stop at the time budget', async (t) => {
  let src = '{{define "t0"}}{{end}}'
  for (let i = 1; i < 45; i++) src += `{{define "t${i}"}}{{template "t${i - 1}" .}}{{template "t${i - 1}" .}}{{end}}`
  const tpl = parseTemplate(`${src}{{template "t44" .}}`)
  const run = timed(() => tpl.execute({}, { timeBudgetMs: 100 }))
  t.match(run.error, { name: 'TemplateError', message: /render took longer than 100 ms/ })
  t.ok(run.ms < 1100, `stopped after ${Math.round(run.ms)} ms`)
})

t.test('replace with an empty old string checks the length before building the result', async (t) => {
  const s = 'x'.repeat(50_000)
  const run = timed(() => parseTemplate('{{ replace "" .s .s }}').execute({ s }))
  t.match(run.error, { name: 'TemplateError', message: /longer than 1048576 characters/ })
  t.ok(run.ms < 1000, `refused in ${Math.round(run.ms)} ms (it built 2.5 G characters before)`)
  t.equal(parseTemplate('{{ replace "" "-" "ab" }}').execute({}), '-a-b-', 'Go semantics kept')
})

t.test('the longest allowed template parses in bounded time, one line or many; a longer one is refused', async (t) => {
  const oneLine = '{{.a}}'.repeat(Math.floor(MAX_SOURCE_LENGTH / 6))
  const run = timed(() => parseTemplate(oneLine))
  t.equal(run.error, undefined)
  t.ok(run.ms < 2000, `${oneLine.length} characters on one line parsed in ${Math.round(run.ms)} ms`)
  const lines = timed(() => parseTemplate('{{.a}}\n'.repeat(Math.floor(MAX_SOURCE_LENGTH / 7))))
  t.equal(lines.error, undefined)
  t.ok(lines.ms < 2000, `parsed in ${Math.round(lines.ms)} ms`)
  t.throws(() => parseTemplate('x'.repeat(MAX_SOURCE_LENGTH + 1)), { name: 'TemplateError', message: /longer than 262144 characters/ })
})

t.test('range over a large map or list stops at the iteration limit; printing huge values stops at the length limit', async (t) => {
  const m = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]))
  const ranged = timed(() => parseTemplate('{{ range $k, $v := .m }}{{ range $.m }}{{ end }}{{ end }}').execute({ m }))
  t.match(ranged.error, { name: 'TemplateError', message: new RegExp(`more than ${DEFAULT_LIMITS.maxRangeIterations} range iterations`) })
  t.ok(ranged.ms < 2000, `${Math.round(ranged.ms)} ms`)
  const printed = timed(() => parseTemplate('{{ printf "%v%v" .m .m }}{{ toJson .m }}').execute({ m }, { maxOutputBytes: 10_000 }))
  t.type(printed.error, TemplateError)
  t.ok(printed.ms < 2000, `${Math.round(printed.ms)} ms`)
  const widths = timed(() => parseTemplate('{{ printf "%99999999999999999999d|%[99999999999999]d|%.99999999999f" 1 2 3.0 }}').execute({}))
  t.ok(widths.error === undefined || widths.error instanceof TemplateError, String(widths.error))
  t.ok(widths.ms < 1000, `${Math.round(widths.ms)} ms`)
})
