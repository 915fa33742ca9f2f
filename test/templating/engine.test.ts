import t from 'tap'
import { parseTemplate, renderManifestTemplate, TemplateError, ManifestTemplateError, DEFAULT_LIMITS } from '../../src/templating/index.ts'

const run = (src: string, data: unknown = {}) => parseTemplate(src).execute(data)

t.test('fields, nested fields and missing keys print like Go (<no value>)', async (t) => {
  t.equal(run('hello {{.name}}!', { name: 'world' }), 'hello world!')
  t.equal(run('{{.a.b}}|{{.missing}}|{{.a.missing.x}}', { a: { b: 'x' } }), 'x|<no value>|<no value>')
})

t.test('if / else if / else, with, range with variables and else', async (t) => {
  const src = '{{if eq .n 3}}three{{else if gt .n 3}}big{{else}}small{{end}}'
  t.equal(run(src, { n: 3 }), 'three')
  t.equal(run(src, { n: 9 }), 'big')
  t.equal(run(src, { n: 1 }), 'small')
  t.equal(run('{{with .a}}{{.b}}{{else}}none{{end}}', { a: { b: 'B' } }), 'B')
  t.equal(run('{{with .a}}{{.b}}{{else}}none{{end}}', {}), 'none')
  t.equal(run('{{range $i, $v := .l}}{{$i}}={{$v}};{{else}}empty{{end}}', { l: ['x', 'y'] }), '0=x;1=y;')
  t.equal(run('{{range .l}}x{{else}}empty{{end}}', { l: [] }), 'empty')
  t.equal(run('{{range $k, $v := .m}}{{$k}}:{{$v}} {{end}}', { m: { b: 2, a: 1 } }), 'a:1 b:2 ')
  t.equal(run('{{range .l}}{{if eq . 2}}{{continue}}{{end}}{{if eq . 4}}{{break}}{{end}}{{.}}{{end}}', { l: [1, 2, 3, 4, 5] }), '13')
})

t.test('define, template and block: a called template sees only its argument', async (t) => {
  t.equal(run('{{define "item"}}{{.name}}:{{.port}}{{end}}{{range .l}}{{template "item" .}} {{end}}', { l: [{ name: 'a', port: 1 }, { name: 'b', port: 2 }] }), 'a:1 b:2 ')
  t.equal(run('{{block "b" .x}}[{{.}}]{{end}}{{template "b" "y"}}', { x: 'x' }), '[x][y]')
  t.throws(() => run('{{$v := 1}}{{define "d"}}{{$v}}{{end}}'), /undefined variable "\$v"/)
  t.throws(() => run('{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}'), /nesting deeper than/)
  t.throws(() => run('{{template "none"}}'), /template "none" not defined/)
})

t.test('trim markers and comments', async (t) => {
  t.equal(run('a  {{- /* note */ -}}  b\n{{- "c" }}'), 'abc')
  t.equal(run('x {{ 3 -}} \n y'), 'x 3y')
})

t.test('the Sprig-like functions follow Helm', async (t) => {
  t.equal(run('{{ .x | default "d" }}|{{ default "d" .y }}', { y: 'y' }), 'd|y')
  t.equal(run('{{ quote .s }}|{{ .s | upper }}|{{ lower "AB" }}|{{ trim "  x \\n" }}', { s: 'a"b' }), '"a\\"b"|A"B|ab|x')
  t.equal(run('{{ replace "a" "o" "banana" }}|{{ b64enc "hi" }}|{{ indent 2 "a\\nb" }}|{{ nindent 2 "a" }}'), 'bonono|aGk=|  a\n  b|\n  a')
  t.equal(run('{{ toJson .m }}', { m: { b: '<x>', a: [1, 2.5, true, null] } }), '{"a":[1,2.5,true,null],"b":"\\u003cx\\u003e"}')
  t.equal(run('{{ toYaml .m }}', { m: { b: 'x', a: [1, 2] } }), 'a:\n- 1\n- 2\nb: x')
  t.throws(() => run('{{ required "x is required" .x }}'), /x is required/)
})

t.test('errors carry the line and column of the construct', async (t) => {
  const parse = t.throws(() => parseTemplate('line one\n  {{ .a | nosuch }}'))
  t.ok(parse instanceof TemplateError)
  t.match(parse, { line: 2, column: 11, message: /line 2, column 11: function "nosuch" not defined/ })
  const exec = t.throws(() => run('ok\n\n   {{ .s.x }}', { s: 'str' }))
  t.match(exec, { line: 3, column: 9, message: /can't evaluate field x in type string/ })
  t.throws(() => parseTemplate('{{ if .x }}unclosed'), TemplateError)
})

t.test('the sandbox: no prototype or method access, bounded output, iterations, depth and time', async (t) => {
  t.equal(run('{{.constructor}}|{{.__proto__}}|{{.toString}}|{{.hasOwnProperty}}', {}), '<no value>|<no value>|<no value>|<no value>')
  t.throws(() => run('{{.s.constructor}}', { s: 'x' }), /can't evaluate field constructor in type string/)
  t.throws(() => run('{{.l.length}}', { l: [1] }), /can't evaluate field length/)
  t.equal(run('{{ index . "constructor" }}', {}), '<no value>')
  const big = Array.from({ length: 200 }, (_, i) => i)
  t.throws(() => parseTemplate('{{range .l}}{{range $.l}}{{range $.l}}x{{end}}{{end}}{{end}}').execute({ l: big }), /range iterations/)
  t.throws(() => parseTemplate('{{range .l}}{{$.s}}{{end}}').execute({ l: big, s: 'x'.repeat(10_000) }, { maxOutputBytes: 100_000 }), /output larger than 100000 bytes/)
  t.throws(() => run('{{ indent 100000000 "x" }}'), /result longer/)
  const deep: Record<string, unknown> = {}
  let cur = deep
  for (let i = 0; i < DEFAULT_LIMITS.maxDepth + 5; i++) cur = (cur.a = {}) as Record<string, unknown>
  t.throws(() => run('{{.a}}', deep), /nested deeper/)
  t.throws(() => parseTemplate('{{' + '('.repeat(500) + '1' + ')'.repeat(500) + '}}'), /nesting deeper/)
})

t.test('renderManifestTemplate keeps hostile values inside one scalar', async (t) => {
  const tpl = parseTemplate('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .name }}\ndata:\n  a: {{ .v }}\n  b: "{{ .v }}"\n  c: {{ .v | quote }}\n')
  const hostile = 'a\nkind: Secret\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: x}\n{{ .name }}'
  const docs = renderManifestTemplate(tpl, { name: 'cm', v: hostile })
  t.equal(docs.length, 1)
  t.same(docs[0], { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: hostile, b: hostile, c: hostile } })
  t.throws(() => renderManifestTemplate(tpl, { name: '', v: 'x' }), ManifestTemplateError)
})
