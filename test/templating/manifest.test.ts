import t from 'tap'
import fc from 'fast-check'
import { parseTemplate, renderManifestTemplate, ManifestTemplateError, TemplateError } from '../../src/templating/index.ts'
import { SEED, runs } from '../helpers/seed.ts'

const CERT = parseTemplate(`apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  secretName: {{ .name }}-tls
  duration: {{ .duration | default "2160h" | quote }}
  isCA: {{ .isCA }}
  revisionHistoryLimit: {{ .history }}
  port: "{{ .port }}"
  dnsNames:
    {{- range .dnsNames }}
    - {{ . }}
    {{- end }}
  issuerRef:
    name: {{ .issuer }}
    kind: {{ .issuerKind | default "ClusterIssuer" }}
`)

t.test('a plugin-style template renders typed values where YAML would type them', async (t) => {
  const [doc] = renderManifestTemplate(CERT, { name: 'web', namespace: 'prod', isCA: false, history: 3, port: 8443, dnsNames: ['a.example.com', 'b.example.com'], issuer: 'le' })
  t.same(doc, {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'prod' },
    spec: { secretName: 'web-tls', duration: '2160h', isCA: false, revisionHistoryLimit: 3, port: '8443', dnsNames: ['a.example.com', 'b.example.com'], issuerRef: { name: 'le', kind: 'ClusterIssuer' } },
  })
})

t.test('hostile values stay one scalar: no new keys, items or documents, no re-interpretation', async (t) => {
  const evil = 'x\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\nstringData: {a: b}\n- item\n"quoted": \'s\'\n{{ .namespace }}'
  const docs = renderManifestTemplate(CERT, { name: 'web', namespace: 'prod', isCA: evil, history: evil, port: evil, dnsNames: [evil, '*.x', '&a', '!!str 1'], issuer: evil, issuerKind: evil })
  t.equal(docs.length, 1)
  const spec = docs[0].spec as Record<string, unknown>
  t.same(Object.keys(spec), ['secretName', 'duration', 'isCA', 'revisionHistoryLimit', 'port', 'dnsNames', 'issuerRef'])
  t.equal(spec.isCA, evil)
  t.equal(spec.revisionHistoryLimit, evil)
  t.equal(spec.port, evil)
  t.same(spec.dnsNames, [evil, '*.x', '&a', '!!str 1'])
  t.same(spec.issuerRef, { name: evil, kind: evil })
  t.notMatch(JSON.stringify(docs), /"prod".*"prod"/s, 'the {{ .namespace }} inside a value was not executed')
})

t.test('a 1 MB value is carried whole into its one field', async (t) => {
  const big = 'a: b\n'.repeat(200_000)
  const [doc] = renderManifestTemplate(CERT, { name: 'web', namespace: 'prod', isCA: true, history: 1, port: 1, dnsNames: [], issuer: big })
  t.equal(((doc.spec as Record<string, Record<string, unknown>>).issuerRef).name, big)
})

t.test('toYaml | nindent and toJson insert whole nodes built from the value, not from its text', async (t) => {
  const tpl = parseTemplate('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:{{ toYaml .labels | nindent 4 }}\n  annotations: {{ toJson .annotations }}\ndata:\n  list: {{ toJson .list }}\n')
  const labels = { app: 'web', evil: 'x\nkind: Secret', 'key: with colon': '---' }
  const [doc] = renderManifestTemplate(tpl, { labels, annotations: { a: '"}' }, list: [1, 'two', { k: null }] })
  t.same(doc, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', labels, annotations: { a: '"}' } }, data: { list: [1, 'two', { k: null }] } })
})

t.test('documents: several are returned in order, empty ones skipped', async (t) => {
  const tpl = parseTemplate('---\n{{ if .a }}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n{{ end }}---\n# only a comment\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .name }}\n')
  t.same(renderManifestTemplate(tpl, { a: true, name: 's' }).map((d) => d.kind), ['ConfigMap', 'Service'])
  t.same(renderManifestTemplate(tpl, { a: false, name: 's' }).map((d) => d.kind), ['Service'])
})

t.test('each document must be a Kubernetes object; broken YAML and alias bombs are refused', async (t) => {
  const render = (src: string, data: Record<string, unknown> = {}) => renderManifestTemplate(parseTemplate(src), data)
  t.throws(() => render('kind: ConfigMap\nmetadata:\n  name: a\n'), { name: 'ManifestTemplateError', message: /has no apiVersion/ })
  t.throws(() => render('apiVersion: v1\nmetadata:\n  name: a\n'), { message: /has no kind/ })
  t.throws(() => render('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .n }}\n', { n: '' }), { message: /has no metadata.name/ })
  t.throws(() => render('apiVersion: v1\nkind: ConfigMap\nmetadata: {{ .n }}\n', { n: 'x' }), { message: /has no metadata.name/ })
  t.throws(() => render('- a\n- b\n'), { message: /is not a mapping/ })
  t.throws(() => render('apiVersion: v1\nkind: [\n'), ManifestTemplateError)
  t.throws(() => render('apiVersion: v1\nkind: A\nmetadata: {name: a}\nx: 1\nx: 2\n'), ManifestTemplateError, 'duplicate keys')
  t.throws(() => render('apiVersion: v1\nkind: A\nmetadata: {name: a}\n{{ .a }}: 1\n{{ .b }}: 2\n', { a: 'k', b: 'k' }), { message: /duplicate key once values are inserted/ })
  let bomb = 'apiVersion: v1\nkind: A\nmetadata: {name: a}\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n'
  for (let i = 1; i < 8; i++) bomb += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`
  t.throws(() => render(bomb), ManifestTemplateError)
})

t.test('a missing value is an error at its position, never "<no value>" in a manifest', async (t) => {
  const err = t.throws(() => renderManifestTemplate(CERT, { name: 'web', namespace: 'prod', isCA: true, history: 1, port: 1, dnsNames: [] }))
  t.ok(err instanceof TemplateError)
  t.match(err, { line: 17, column: 14, message: /\.issuer has no value/ })
  t.equal(CERT.execute({}).includes('<no value>'), true, 'plain execute keeps Go semantics')
})

t.test('references lists the top-level fields a template reads', async (t) => {
  const tpl = parseTemplate('{{ .a }}{{ .b.c }}{{ $.d }}{{ with .e }}{{ .notTop }}{{ $.f }}{{ else }}{{ .g }}{{ end }}{{ range .h }}{{ .notTop2 }}{{ end }}{{ if .i }}{{ .j }}{{ end }}{{ printf "%s" (.k) | quote }}{{ $x := .l }}{{ $x.notTop3 }}')
  t.same([...tpl.references].sort(), ['a', 'b', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'])
  t.same([...CERT.references].sort(), ['dnsNames', 'duration', 'history', 'isCA', 'issuer', 'issuerKind', 'name', 'namespace', 'port'])
})

t.test('regression (CI seed 475705986): "" and "0" joined by text render the string "-0", not the number', async (t) => {
  const tpl = parseTemplate('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fixed\ndata:\n  joined: {{ .a }}-{{ .b }}\n')
  const [doc] = renderManifestTemplate(tpl, { a: '', b: '0' })
  t.equal((doc.data as Record<string, unknown>).joined, '-0')
})

t.test('a string value stays a string where YAML would read its text as another type', async (t) => {
  const tpl = parseTemplate('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .name }}\ndata:\n  a: {{ .a }}\n  b: {{ .b }}\n  c: {{ .c }}\n  d: {{ .d }}\n  e: {{ .e }}\n  f: {{ .f }}\n')
  const [doc] = renderManifestTemplate(tpl, { name: '0x1F', a: '3', b: 'true', c: 'null', d: '', e: '~', f: '1e3' })
  t.same(doc, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '0x1F' }, data: { a: '3', b: 'true', c: 'null', d: '', e: '~', f: '1e3' } })
  const [typed] = renderManifestTemplate(tpl, { name: 'n', a: 3, b: true, c: 2.5, d: false, e: -1, f: 0 })
  t.same(typed.data, { a: 3, b: true, c: 2.5, d: false, e: -1, f: 0 }, 'a number or boolean value alone in a plain scalar keeps its type')
})

// The rule, as a property: whatever the value, a scalar's type is the template's choice. A plain scalar
// that is exactly one number or boolean value takes that value; toJson asks for the value as a node;
// everything else (string values, text around a value, several values, quoted scalars, keys) is a string
// holding exactly the printed text.
t.test(`a substituted value never changes a scalar's type unless the template asks for it (seed ${SEED})`, async () => {
  const RULE = parseTemplate(`apiVersion: v1
kind: ConfigMap
metadata:
  name: fixed
data:
  exact: {{ .a }}
  joined: {{ .a }}-{{ .b }}
  adjacent: {{ .a }}{{ .b }}
  prefixed: x{{ .a }}
  suffixed: {{ .a }}0
  double: "{{ .a }}"
  single: '{{ .a }}'
  json: {{ toJson .a }}
  {{ .b }}: key
`)
  const print = (v: unknown) => parseTemplate('{{ . }}').execute(v)
  const scalarText = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', '0', '-0', '3', '0x10', '0o7', '1e3', '.5', '-.inf', '.nan', 'true', 'False', 'null', '~', 'NULL', '-', '+1', '1_000'))
  const value = fc.oneof(scalarText, fc.integer(), fc.double({ noNaN: true }), fc.boolean())
  fc.assert(fc.property(value, scalarText, (a, b) => {
    fc.pre(b.trim() !== '' && !['apiVersion', 'kind', 'metadata', 'data'].includes(b))
    let docs: Record<string, unknown>[]
    try {
      docs = renderManifestTemplate(RULE, { a, b })
    } catch (e) {
      // Keys that collide once inserted (b equal to another key) are refused, never merged.
      if (e instanceof ManifestTemplateError && /duplicate key/.test(e.message)) return
      throw e
    }
    const data = docs[0].data as Record<string, unknown>
    const [pa, pb] = [print(a), print(b)]
    if (typeof a === 'number' ? !(data.exact === a || (Object.is(a, -0) && data.exact === 0)) : data.exact !== a) {
      throw new Error(`exact: ${JSON.stringify(data.exact)} for ${JSON.stringify(a)}`)
    }
    const strings: Record<string, string> = { joined: `${pa}-${pb}`, adjacent: pa + pb, prefixed: `x${pa}`, suffixed: `${pa}0`, double: pa, single: pa }
    for (const [k, want] of Object.entries(strings)) if (data[k] !== want) throw new Error(`${k}: ${JSON.stringify(data[k])}, want the string ${JSON.stringify(want)}`)
    if (data[b] !== 'key') throw new Error('the key was not the value\'s text')
    if (JSON.stringify(data.json) !== JSON.stringify(Object.is(a, -0) ? 0 : a)) throw new Error(`json: ${JSON.stringify(data.json)} for ${JSON.stringify(a)}`)
  }), { numRuns: runs(500) })
})
