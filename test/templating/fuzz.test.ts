// Fuzz: random templates (from the grammar and from raw token noise) with random data never crash
// (only TemplateError), never hang, and never exceed the render limits.
import t from 'tap'
import fc from 'fast-check'
import { SEED, runs } from '../helpers/seed.ts'
import { parseTemplate, renderManifestTemplate, TemplateError, ManifestTemplateError, type RenderLimits } from '../../src/templating/index.ts'
import { DATA, dataArb, noiseArb, templateArb } from './arbitraries.ts'

const LIMITS: RenderLimits = { maxOutputBytes: 4096, maxRangeIterations: 200, maxDepth: 20, timeBudgetMs: 100 }
const seed = SEED

function renderBounded(source: string, data: unknown): void {
  const started = performance.now()
  try {
    const out = parseTemplate(source).execute(data, LIMITS)
    if (Buffer.byteLength(out) > LIMITS.maxOutputBytes) throw new Error(`output of ${Buffer.byteLength(out)} bytes escaped the limit`)
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e
    if (!(e.line >= 1 && e.column >= 1)) throw new Error(`error without a position: ${e.message}`)
  }
  const took = performance.now() - started
  // The budget is checked between steps; one step (a format or a function call) is bounded by the size limits.
  if (took > LIMITS.timeBudgetMs + 400) throw new Error(`render took ${took} ms`)
}

t.test(`generated templates with random data only ever fail with TemplateError, within the limits (seed ${seed})`, async () => {
  fc.assert(fc.property(templateArb, fc.oneof(fc.constant(DATA as unknown), dataArb), renderBounded), { numRuns: runs(1500), seed })
})

t.test(`token noise never crashes the lexer or the parser (seed ${seed})`, async () => {
  fc.assert(fc.property(noiseArb, (source) => renderBounded(source, DATA)), { numRuns: runs(3000), seed })
  fc.assert(fc.property(fc.string({ maxLength: 60 }), (source) => renderBounded(source, DATA)), { numRuns: runs(1000), seed })
})

t.test('explosive templates stop at the limits with a TemplateError', async (t) => {
  const wide = { l: Array.from({ length: 100 }, (_, i) => i), s: 'x'.repeat(1000) }
  t.throws(() => parseTemplate('{{range .l}}{{range $.l}}{{range $.l}}{{end}}{{end}}{{end}}').execute(wide, LIMITS), /more than 200 range iterations/)
  t.throws(() => parseTemplate('{{range .l}}{{$.s}}{{end}}').execute(wide, LIMITS), /output larger than 4096 bytes/)
  t.throws(() => parseTemplate('{{$x := .s}}{{range .l}}{{$x = printf "%s%s" $x $x}}{{end}}').execute(wide, { ...LIMITS, maxRangeIterations: 1000 }), /longer than 4096/)
  t.throws(() => parseTemplate('{{printf "%1000000d" 1}}').execute({}, LIMITS), /longer than 4096/)
  t.throws(() => parseTemplate('{{replace "" .s .s}}').execute(wide, LIMITS), /longer than 4096/)
  const slow = parseTemplate('{{range .l}}{{range $.l}}{{range $.l}}{{len $.s}}{{end}}{{end}}{{end}}')
  t.throws(() => slow.execute(wide, { maxRangeIterations: 1e9, maxOutputBytes: 1e9, timeBudgetMs: 20 }), /render took longer than 20 ms/)
  const nested = '{{if .t}}'.repeat(30) + 'x' + '{{end}}'.repeat(30)
  t.throws(() => parseTemplate(nested).execute({ t: true }, LIMITS), /nesting deeper than 20 levels/)
  const cyclic: Record<string, unknown> = { name: 'x' }
  cyclic.self = cyclic
  t.throws(() => parseTemplate('{{.self.self.name}}').execute(cyclic), /cycle/)
})

const MANIFEST = parseTemplate(`apiVersion: v1
kind: ConfigMap
metadata:
  name: fixed
  labels:
    a: {{ .a }}
    {{ .k }}: "{{ .b }}"
data:
  plain: {{ .a }}
  quoted: '{{ .b }}'
  joined: {{ .a }}-{{ .b }}
  piped: {{ .a | quote }}
  block: |
    {{ .b }}
  json: {{ toJson .c }}
  yaml:{{ toYaml .c | nindent 4 }}
`)

t.test(`hostile values never change the structure of a rendered manifest (seed ${seed})`, async () => {
  const hostile = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('a\nkind: Secret', '\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: x}', '{{ .a }}',
    '"', "'", 'x: y', '- z', '*alias', '&anchor', '!!binary AAAA', '# c', ': ', '|', '>', '[', '{', '}', '\t', '\r\n', 'x'.repeat(2000)))
  fc.assert(fc.property(hostile, hostile, hostile, dataArb, (a, b, k, c) => {
    let docs: Record<string, unknown>[]
    try {
      docs = renderManifestTemplate(MANIFEST, { a, b, k, c })
    } catch (e) {
      // A value may make the document invalid (e.g. an empty key): refused, never reinterpreted.
      if (e instanceof ManifestTemplateError || e instanceof TemplateError) return
      throw e
    }
    if (docs.length !== 1) throw new Error(`${docs.length} documents`)
    const doc = docs[0] as { kind: unknown; metadata: { name: unknown; labels: Record<string, unknown> }; data: Record<string, unknown> }
    if (doc.kind !== 'ConfigMap' || doc.metadata.name !== 'fixed') throw new Error('identity changed')
    if (Object.keys(doc).sort().join() !== 'apiVersion,data,kind,metadata') throw new Error(`top-level keys ${Object.keys(doc)}`)
    if (Object.keys(doc.data).sort().join() !== 'block,joined,json,piped,plain,quoted,yaml') throw new Error(`data keys ${Object.keys(doc.data)}`)
    if (Object.keys(doc.metadata.labels).sort().join('\0') !== ['a', k].sort().join('\0')) throw new Error(`label keys ${Object.keys(doc.metadata.labels)}`)
    if (doc.metadata.labels[k] !== b) throw new Error('a label value was altered')
    if (doc.data.quoted !== b || doc.data.piped !== a) throw new Error('a value was altered')
    if (typeof doc.data.joined !== 'string' || typeof doc.data.block !== 'string') throw new Error('a scalar became structure')
  }), { numRuns: runs(400), seed })
})

t.test(`error messages never echo a value from the data, so a secret cannot leak through one (seed ${seed})`, async () => {
  const SECRET = 'S3CR3T-never-in-a-message'
  const secretData = JSON.parse(JSON.stringify(DATA, (_k, v: unknown) => (typeof v === 'string' ? SECRET : v))) as unknown
  fc.assert(fc.property(templateArb, (source) => {
    // required's message is the template author's choice (Helm), even when it is a value.
    fc.pre(!source.includes('required'))
    try {
      parseTemplate(source).execute(secretData, LIMITS)
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e
      if (e.message.includes(SECRET)) throw new Error(`leaked: ${e.message}`)
    }
    try {
      renderManifestTemplate(parseTemplate(`apiVersion: v1\nkind: A\nmetadata:\n  name: n\nx: ${source.replaceAll('\n', ' ')}\n`), secretData as Record<string, unknown>, LIMITS)
    } catch (e) {
      if (!(e instanceof TemplateError) && !(e instanceof ManifestTemplateError)) throw e
      if (e.message.includes(SECRET)) throw new Error(`leaked: ${e.message}`)
    }
  }), { numRuns: runs(1500), seed })
})
