// The differential corpus: every construct and function Go's text/template has natively (plus the
// Helm-like ones re-implemented in go-ref/main.go), whitespace trimming, missing keys, nested with/range,
// variables, and errors (which must fail on both sides). toYaml is absent: Go's stdlib has no YAML.

export const DATA = {
  name: 'web', ns: 'default', n: 3, zero: 0, neg: -7, f: 2.5, third: 0.3333333333333333, big: 1234567, bigf: 1234567.5,
  tiny: 0.00001, huge: 1e21, exact: 100000, million: 1e6, t: true, fl: false, empty: '', nul: null,
  list: ['a', 'b', 'c'], nums: [3, 1, 2], floats: [1.5, -0.25], emptyList: [], nested: { a: { b: { c: 'deep' } } },
  m: { z: 1, a: 2, m: 'x' }, emptyMap: {}, s: 'Hello, World', uni: 'héllo wörld ß ǅ', multi: 'line1\nline2\n',
  q: 'say "hi"\t<&> \\ \u0001 \u007f é', spaces: ' \t padded \n ', items: [{ name: 'a', port: 80 }, { name: 'b', port: 443, tls: true }],
  mixed: [1, 'two', 3.5, true, null, { k: 'v' }, [1, 2]], keys: { 'with-dash': 1, '': 'empty', B: 2, a: 3, é: 4 },
  port: '8080', num: 42, i64: 9007199254740993, negf: -1.5e-7, labels: { app: 'web', tier: 'front' },
}

/** Go constructs the engine refuses on purpose (see README): it must say so, not misrender them. */
export const NOT_SUPPORTED: string[] = ['{{ 1i }}', '{{ 0x1p-2 }}']

export const CORPUS: string[] = [
  // text, fields, missing keys
  '', 'plain text', '{{.name}}', '{{ .name }}-{{ .ns }}', '{{.nested.a.b.c}}', '{{.nested.a.x}}', '{{.nested.x.y.z}}',
  '{{.missing}}', '{{.missing.deeper}}', '{{.nul}}', '{{.nul.x}}', '{{.name.x}}', '{{.list.x}}', '{{.}}', '{{$}}', '{{$.name}}',
  '{{.n}} {{.zero}} {{.neg}} {{.f}} {{.third}} {{.big}} {{.bigf}} {{.tiny}} {{.huge}} {{.exact}} {{.million}} {{.i64}} {{.negf}}',
  '{{.t}} {{.fl}} [{{.empty}}]', '{{.list}} {{.nums}} {{.emptyList}} {{.mixed}}', '{{.m}} {{.emptyMap}} {{.keys}} {{.nested}}',
  '{{.items}}', '{{.keys.B}}', '{{.m.z}}{{.m.a}}',
  // literals
  '{{1}} {{-1}} {{+5}} {{1.5}} {{1e3}} {{0x1F}} {{0o17}} {{017}} {{0b101}} {{1_000}} {{\'a\'}} {{\'\\n\'}} {{"str"}} {{`raw\\n`}} {{true}} {{false}}',
  '{{ "a\\tb\\u00e9\\x41" }}', '{{ 1.0 }} {{ 2.50 }} {{ .5 }} {{ 1e-7 }} {{ 123456789.0 }}', '{{nil}}', '{{ 99999999999999999999 }}',
  // trimming and comments
  'a {{- .name -}} b', 'a\n\n  {{- .name }}\n\n  b', 'a {{ .name -}}\n\t\n b', '{{- /* comment */ -}}  x', 'x{{/* c */}}y', 'a  {{- /* c */}}  b',
  'a {{/* multi\nline */}} b', '{{- "x" -}}', '{{ -3 }}', '{{-3}}', '{{3 -}} y',
  // if / else
  '{{if .t}}yes{{end}}', '{{if .fl}}yes{{else}}no{{end}}', '{{if .missing}}yes{{else}}no{{end}}', '{{if .empty}}y{{else}}n{{end}}',
  '{{if .emptyList}}y{{else}}n{{end}}', '{{if .emptyMap}}y{{else}}n{{end}}', '{{if .zero}}y{{else}}n{{end}}', '{{if .nul}}y{{else}}n{{end}}',
  '{{if eq .n 1}}one{{else if eq .n 2}}two{{else if eq .n 3}}three{{else}}many{{end}}', '{{if .list}}{{len .list}}{{end}}',
  '{{ if and .t .n }}both{{ end }}', '{{ if or .fl .zero }}x{{ else }}neither{{ end }}', '{{ if not .fl }}not{{ end }}',
  // with
  '{{with .nested.a}}{{.b.c}}{{end}}', '{{with .missing}}x{{else}}none{{end}}', '{{with .name}}{{.}}!{{end}}', '{{with $x := .n}}{{$x}}{{.}}{{end}}',
  '{{with .nested}}{{with .a}}{{with .b}}{{.c}} {{$.name}}{{end}}{{end}}{{end}}', '{{with .emptyList}}x{{else}}{{.name}}{{end}}',
  // range
  '{{range .list}}[{{.}}]{{end}}', '{{range $i, $e := .list}}{{$i}}:{{$e}} {{end}}', '{{range $e := .nums}}{{$e}}{{end}}',
  '{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}', '{{range .m}}{{.}}{{end}}', '{{range $k, $v := .keys}}[{{$k}}]{{end}}',
  '{{range .emptyList}}x{{else}}empty{{end}}', '{{range .missing}}x{{else}}missing{{end}}', '{{range .nul}}x{{else}}nil{{end}}',
  '{{range .emptyMap}}x{{else}}none{{end}}', '{{range .items}}{{.name}}:{{.port}}{{if .tls}}+tls{{end}} {{end}}',
  '{{range .items}}{{range $.list}}{{.}}{{end}}|{{end}}', '{{range $i, $x := .items}}{{range $j, $y := $.nums}}{{$i}}{{$j}}{{$y}} {{end}}{{end}}',
  '{{range .nums}}{{if eq . 1}}{{continue}}{{end}}{{.}}{{end}}', '{{range .nums}}{{if eq . 1}}{{break}}{{end}}{{.}}{{end}}',
  '{{range .mixed}}<{{.}}>{{end}}', '{{range .n}}x{{end}}', '{{range .name}}x{{end}}', '{{range $i, $c := .list}}{{if $i}}, {{end}}{{$c}}{{end}}',
  '{{range .list}}{{$x := .}}{{$x}}{{end}}', '{{range .list -}} {{.}} {{- end}}',
  // variables
  '{{$x := 1}}{{$x}}', '{{$x := .name}}{{$x = "changed"}}{{$x}}', '{{$x := 1}}{{if .t}}{{$x = 2}}{{end}}{{$x}}',
  '{{$x := 1}}{{range .list}}{{$x = .}}{{end}}{{$x}}', '{{$x := .nested}}{{$x.a.b.c}}', '{{$}}', '{{$x := .missing}}{{$x}}',
  '{{$x := .nul}}{{$x}}', '{{$u}}', '{{$x = 1}}', '{{with $x := .m}}{{$x.a}}{{end}}{{$x}}',
  // pipelines and parentheses
  '{{.name | printf "%s!"}}', '{{"x" | printf "%s-%s" "y"}}', '{{ (.nested.a).b.c }}', '{{ (index .items 1).port }}', '{{ len (index .items 0) }}',
  '{{ .n | printf "%d" | printf "%q" }}', '{{ printf "%v" (eq (len .list) 3) }}', '{{ (1) }}', '{{ ("a") }}', '{{ .name | len }}',
  '{{ "a" | "b" }}', '{{ .name .ns }}', '{{ 1 2 }}', '{{ (.name) 2 }}', '{{ .list | index 1 }}', '{{ 1 | index .list }}',
  // comparisons
  '{{eq .n 3}} {{eq .n 4}} {{eq .name "web"}} {{eq .t true}} {{eq .f 2.5}} {{eq .n 1 2 3}}', '{{ne .n 3}} {{ne "a" "b"}}',
  '{{lt 1 2}} {{lt 2 1}} {{le 2 2}} {{gt 3 2}} {{ge 2 3}} {{lt "a" "b"}} {{lt .f 3.0}} {{lt .neg 0}}', '{{lt "B" "a"}} {{lt "é" "z"}}',
  '{{eq .n 3.0}}', '{{eq .n "3"}}', '{{lt .n "x"}}', '{{lt true false}}', '{{eq .missing "x"}}', '{{eq .missing .nul}}', '{{eq .list .list}}',
  '{{eq .nul 1}}', '{{lt .missing 1}}', '{{eq}}', '{{eq 1}}', '{{ne 1}}', '{{eq .i64 9007199254740993}}',
  // and / or / not
  '{{and 1 0 "x"}} {{and 1 2}} {{or 0 "" .name}} {{or 0 ""}} {{or .missing "fallback"}} {{and .t .list}}', '{{not 0}} {{not "x"}} {{not .emptyList}}',
  '{{or .empty .nul .missing}}', '{{and .nul 1}}', '{{ .name | or .missing }}', '{{ 0 | and 1 }}', '{{and}}', '{{or (index .list 5) "x"}}',
  '{{ or .port 80 }} {{ or .missing 80 }}',
  // len / index / slice
  '{{len .list}} {{len .m}} {{len .name}} {{len .uni}} {{len .emptyList}}', '{{len .n}}', '{{len .missing}}', '{{len .nul}}',
  '{{index .list 0}} {{index .m "a"}} {{index .m "nope"}} {{index .nested "a" "b" "c"}} {{index .name 1}} {{index .items 1 "name"}}',
  '{{index .list 3}}', '{{index .list -1}}', '{{index .list 1.0}}', '{{index .m 1}}', '{{index .missing 0}}', '{{index .n 0}}', '{{index .list}}',
  '{{index .mixed 4}}', '{{index .mixed 4 "x"}}', '{{slice .list 1}} {{slice .list 1 2}} {{slice .name 1 3}} {{slice .list}}', '{{slice .list 2 1}}', '{{slice .n 1}}',
  // print / println / printf
  '{{print "a" "b" 1 2 "c" 3.5 true .nul}}', '{{print}}', '{{println "a" 1 .list}}', '{{print .m .list}}', '{{print .missing}}',
  '{{printf "%s|%v|%d|%q|%x|%X|%t|%c|%U" .name .list .n .s .num .num .t 65 0x1F600}}',
  '{{printf "%5s|%-5s|%.2s|%5.1s|%05d|%-5d|%+d|% d|%x|%#x|%#o|%o|%b|%O" "ab" "ab" "abc" "xyz" 42 42 42 42 -255 255 8 8 5 8}}',
  '{{printf "%f|%.2f|%8.3f|%-8.2f|%+.1f|%e|%.3e|%E|%g|%G|%.3g|%08.3f|% f" .f .third .f .f .f .bigf .bigf .tiny .big .tiny .third -2.5 .f}}',
  '{{printf "%.0f %.0f %.0f %.1f %.2f" 0.5 1.5 2.5 0.25 1.005}}', '{{printf "%v %v %v %v %v %v" 1e20 1e21 123456.0 1234567.0 0.0001 0.00001}}',
  '{{printf "%g %g %g" 100000.0 1e6 1e-5}}', '{{printf "%.3g|%.10g|%g" 1234.5678 1234.5678 .third}}', '{{printf "%6.2f%%" 99.5}}',
  '{{printf "%q|%+q|%#q|%q" .q .uni "back`tick" "plain"}}', '{{printf "%x|% x|%#x|%X|% X" "hi é" "hi" "hi" "hi" "hi"}}',
  '{{printf "%d %s" "str" 5}}', '{{printf "%d"}}', '{{printf "%d %d" 1}}', '{{printf "x" 1 "a"}}', '{{printf "%!"}}', '{{printf "%"}}',
  '{{printf "%z" 1}}', '{{printf "%s" .nul}}', '{{printf "%v|%d" .missing .missing}}', '{{printf "%T %T %T %T %T %T %T" 1 1.5 "s" true .list .m .nul}}',
  '{{printf "%v|%+v|%#v" .list .list .list}}', '{{printf "%#v|%#v|%#v|%#v" .m "s" 42 .mixed}}', '{{printf "%s" .list}}', '{{printf "%d" .mixed}}',
  '{{printf "%5v|%-6v|%05v" .list .n .n}}', '{{printf "%[2]s %[1]s" "a" "b"}}', '{{printf "%[3]d" 1 2}}', '{{printf "%*d|%-*d|%.*f" 5 42 4 7 2 3.14159}}',
  '{{printf "%c|%q|%U|%#U" 0x4E16 0x4E16 0x4E16 0x4E16}}', '{{printf "%t %t" true 1}}', '{{printf "%s" 1.5}}', '{{printf "%x %X %o %b" 1.5 1.5 1 -5}}',
  '{{printf "%08.3f|%-08.3f|%+08.2f|% 08.2f" -3.14159 3.14159 2.5 2.5}}', '{{printf "%3c|%-3c|" 65 66}}', '{{printf "%010s|%-010s" "abc" "abc"}}',
  '{{printf "%.3d|%.0d|%5.0d|%08.3d" 7 0 0 7}}', '{{printf "%v %.2v %10.4v" .third .third .third}}', '{{printf "%#g %#.3g %#v" 1.0 2.0 3.0}}',
  '{{printf 1}}', '{{printf .n}}', '{{printf .name}}',
  // html / js / urlquery
  '{{html "<a href=\\"x\\">&\'</a>"}}', '{{html .missing}}', '{{html 1 2}}', '{{js .q}}', '{{js "a=b</script>"}}', '{{urlquery "a b&c=d/é?"}}', '{{urlquery .list}}',
  // Helm-like functions
  '{{default "d" .missing}} {{default "d" .empty}} {{default "d" .zero}} {{default "d" .name}} {{default "d" .fl}} {{default "d" .emptyList}} {{default "d" .nul}}',
  '{{.missing | default "piped"}} {{.name | default "no"}} {{default "d"}}', '{{ default 5 .n }} {{ default 5 .zero }}',
  '{{quote .name}} {{quote .n}} {{quote .q}} {{quote .list}} {{quote .missing}} {{quote "a" "b"}} {{quote}} {{.f | quote}} {{quote .nul}}',
  '{{toJson .m}} {{toJson .list}} {{toJson .name}} {{toJson .n}} {{toJson .f}} {{toJson .nul}} {{toJson .missing}} {{toJson .q}}',
  '{{toJson .}}', '{{toJson .huge}} {{toJson .tiny}} {{toJson .negf}} {{toJson .bigf}} {{toJson .third}} {{toJson .i64}}',
  '{{indent 2 .multi}}|{{nindent 4 "a\\nb"}}|{{indent 0 "x"}}', '{{ .multi | indent 3 }}', '{{ indent .n "x" }}', '{{ indent .f "x" }}', '{{ indent "2" "x" }}',
  '{{ indent 2 .n }}', '{{ nindent 2 .missing }}', '{{ indent -1 "x" }}',
  '{{b64enc .name}} {{b64enc .uni}} {{b64enc ""}}', '{{b64enc .n}}', '{{lower .s}} {{upper .s}} {{upper .uni}} {{lower "ÀÉÎ İ"}}', '{{upper .n}}',
  '{{trim .spaces}}|{{trim ""}}|{{trim "\\u00a0x\\u2003"}}', '{{replace "l" "L" .s}} {{replace "" "-" "abc"}} {{replace "x" "" "axbxc"}}',
  '{{ .s | replace "World" "There" }}', '{{ .name | upper | quote }}', '{{ .labels | toJson | quote }}',
  '{{required "name is required" .name}}', '{{required "missing!" .missing}}', '{{required "empty!" .empty}}', '{{required "zero ok" .zero}}', '{{required "nul!" .nul}}',
  // parse errors
  '{{', '{{.name', '{{ .name }', '{{end}}', '{{else}}', '{{if .t}}x', '{{range .list}}{{else}}{{else}}{{end}}', '{{with}}{{end}}',
  '{{ nosuch 1 }}', '{{ .a..b }}', '{{ "unterminated }}', '{{ 1a }}', '{{ $x := }}', '{{break}}', '{{range .list}}{{end}}{{continue}}',
  '{{ ) }}', '{{ ( 1 }}', '{{ .name | }}', '{{ | .name }}', '{{ .name | "x" }}', '{{/* unclosed', '{{/* x */ .name}}', '{{ 3.x }}', '{{ "a".b }}',
  '{{ $x, $y := .list }}', '{{ range $a, $b, $c := .list }}{{end}}', '{{ @ }}', '{{template "x"}}',
  '{{if .t}}a{{else if}}b{{end}}', '{{ .name := 1 }}', '{{ 0x }}', '{{ 1__0 }}', '{{ 9223372036854775808 }}', '{{ \'ab\' }}',
  // realistic manifests
  `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .name }}
  namespace: {{ .ns | default "default" }}
  labels:
    {{- range $k, $v := .labels }}
    {{ $k }}: {{ $v | quote }}
    {{- end }}
spec:
  replicas: {{ .n }}
  template:
    spec:
      containers:
        {{- range $i, $item := .items }}
        - name: {{ $item.name }}-{{ $i }}
          ports:
            - containerPort: {{ $item.port }}
          {{- if $item.tls }}
          env:
            - name: TLS
              value: "true"
          {{- end }}
        {{- end }}
`,
  `{{- with .nested.a.b -}}
value: {{ .c | upper }}
{{- else -}}
value: none
{{- end }}
{{ if and .t (gt .n 2) (lt .f 3.0) -}} ok {{- end }}
{{ $first := index .list 0 }}{{ $first }}{{ range .list }}{{ if ne . $first }},{{ . }}{{ end }}{{ end }}
{{ printf "%s/%s:%d" .ns .name .num }}
{{ .labels | toJson }}
{{- /* trailing */ -}}
`,
  '{{ range $i, $e := .mixed }}{{ $i }}={{ printf "%v" $e }}({{ printf "%T" $e }}) {{ end }}',
  '{{ range .items }}{{ $.name }}/{{ .name }} {{ with .tls }}tls={{ . }}{{ else }}plain{{ end }};{{ end }}',
  '{{ $n := len .list }}{{ range $i, $e := .list }}{{ $e }}{{ if lt $i (len (slice $.list 1)) }}, {{ end }}{{ end }} ({{ $n }})',
  '{{ if eq (index .m "a") 2 }}a is 2{{ end }} {{ if eq (printf "%v" .n) "3" }}n is "3"{{ end }}',
  '{{ range $k, $v := .nested }}{{ $k }}{{ range $k2, $v2 := $v }}.{{ $k2 }}{{ range $k3, $v3 := $v2 }}.{{ $k3 }}={{ $v3 }}{{ end }}{{ end }}{{ end }}',
  '{{ print .n .f .name .t }}|{{ print "a" .n "b" }}|{{ print .n "x" .f }}|{{ println }}|{{ print 1 2 }}|{{ print "a" "b" }}',
  '{{ or .missing .nul .empty .zero .fl }}|{{ and .t .n .name .list }}|{{ or }}',
  '{{ $v := "a" }}{{ with $v := "b" }}{{ $v }}{{ end }}{{ $v }}{{ range $v := .list }}{{ $v }}{{ end }}{{ $v }}',
  '{{ range .list }}{{ range $.nums }}{{ if eq . 2 }}{{ break }}{{ end }}{{ . }}{{ end }}{{ . }}{{ end }}',
  '{{ range $i, $e := .nums }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ $e }}{{ else }}none{{ end }}',
  // define / template / block
  '{{define "x"}}y{{end}}', '{{define "x"}}[{{.}}]{{end}}{{template "x" .name}}{{template "x"}}{{template "x" .list}}',
  '{{define "item"}}{{.name}}={{.port}}{{end}}{{range .items}}{{template "item" .}};{{end}}', '{{block "b" .name}}<{{.}}>{{end}}|{{template "b" "again"}}',
  '{{define "v"}}{{$}}{{$x := 1}}{{$x}}{{end}}{{$x := 2}}{{template "v" .n}}{{$x}}', '{{template "nope"}}', '{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}',
  '{{define "a"}}A{{template "b" .}}{{end}}{{define "b"}}B{{.n}}{{end}}{{template "a" .}}', '{{define "x"}}{{end}}{{define "x"}}second{{end}}{{template "x"}}',
  '{{define "x"}}one{{end}}{{define "x"}}two{{end}}', '{{define "x"}}{{break}}{{end}}', '{{range .list}}{{define "x"}}{{end}}{{end}}', '{{define x}}{{end}}',
  '{{define "x"}}{{$y}}{{end}}', '{{$y := 1}}{{define "x"}}{{$y}}{{end}}', '{{block "b"}}x{{end}}', '{{template "x" 1 2}}{{define "x"}}{{end}}',
  '{{define "x" -}}  trimmed  {{- end}}({{template "x"}})', '{{with .nested}}{{template "in" .a}}{{end}}{{define "in"}}{{.b.c}}{{end}}',
  // whitespace inside actions, unusual but valid
  '{{\n.name\n}}', '{{\t.name\t|\tprintf "%s"\t}}', '{{ .name|printf "%s"}}', '{{(.name)}}', '{{ if .t }}{{ . | len }}{{ end }}',
]
