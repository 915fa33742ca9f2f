// fast-check generators of templates (from the engine's grammar) and of data, shared by the random
// differential test and the fuzz test.
import fc from 'fast-check'

const FIELDS = ['.name', '.n', '.zero', '.neg', '.f', '.big', '.bigf', '.tiny', '.t', '.fl', '.empty', '.nul', '.list', '.nums', '.emptyList',
  '.nested', '.nested.a', '.nested.a.b.c', '.m', '.m.a', '.emptyMap', '.s', '.uni', '.multi', '.q', '.items', '.mixed', '.missing', '.missing.x',
  '.keys', '.labels', '.port', '.', '$', '$.name', '$.list', '$.m']
const LITERALS = ['0', '1', '-1', '3', '2.5', '1e3', '0x10', "'a'", '"x"', '"a b"', '"%d"', '"%v|%s"', '`raw`', 'true', 'false', 'nil', '""', '"3"', '1.0']
const FUNCS: [string, number][] = [['and', 2], ['or', 2], ['not', 1], ['len', 1], ['index', 2], ['slice', 2], ['eq', 2], ['ne', 2], ['lt', 2], ['le', 2],
  ['gt', 2], ['ge', 2], ['print', 2], ['println', 1], ['html', 1], ['js', 1], ['urlquery', 1], ['default', 2], ['quote', 1], ['toJson', 1],
  ['indent', 2], ['nindent', 2], ['b64enc', 1], ['lower', 1], ['upper', 1], ['trim', 1], ['replace', 3], ['required', 2]]
const FORMATS = ['%v', '%d', '%s', '%q', '%5.2f', '%x', '%X', '%-4s', '%+d', '%e', '%g', '%t', '%c', '%%', '%05d', '% x', '%#v', '%T', '%[1]d', '%*d',
  '%.3s', '%!', '%8.3e', '%o', '%b', '%U', '%+q', '%#x', '%6v', '%-6v|', '%.0f', '%G', ' ', 'x', '%']
const TEXTS = ['', 'a', ' ', '  ', '\n', ' x \n ', 'key: ', '\t', '-', ',', 'é']

const operand: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...FIELDS), fc.constantFrom(...LITERALS))

const { expr } = fc.letrec<{ expr: string; call: string; arg: string }>((tie) => ({
  arg: fc.oneof({ depthSize: 'small', withCrossShrink: true }, operand, operand, tie('call').map((c) => `(${c})`)),
  call: fc.oneof(
    { depthSize: 'small' },
    fc.tuple(fc.constantFrom(...FUNCS), fc.array(tie('arg'), { maxLength: 3 }), fc.boolean()).map(([[name, arity], args, exact]) =>
      [name, ...(exact ? args.slice(0, arity) : args)].join(' ')),
    fc.tuple(fc.array(fc.constantFrom(...FORMATS), { minLength: 1, maxLength: 4 }), fc.array(tie('arg'), { maxLength: 3 }))
      .map(([fmt, args]) => ['printf', JSON.stringify(fmt.join('')), ...args].join(' ')),
  ),
  expr: fc.oneof(
    { depthSize: 'small' },
    operand,
    tie('call'),
    fc.tuple(tie('arg'), fc.constantFrom('len', 'quote', 'upper', 'toJson', 'default "d"', 'printf "%v"', 'print', 'not', 'index $.m', 'eq 3', 'or "x"'))
      .map(([a, f]) => `${a} | ${f}`),
  ),
}))

function action(e: string, trimLeft: boolean, trimRight: boolean): string {
  return `{{${trimLeft ? '- ' : ' '}${e}${trimRight ? ' -' : ' '}}}`
}

/** A template of text, actions and control structures (if/with/range with variables, break/continue). */
export const templateArb: fc.Arbitrary<string> = fc.letrec<{ body: string; node: string }>((tie) => ({
  body: fc.array(tie('node'), { maxLength: 4 }).map((xs) => xs.join('')),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...TEXTS),
    fc.tuple(expr, fc.boolean(), fc.boolean()).map(([e, l, r]) => action(e, l, r)),
    fc.tuple(expr, tie('body'), fc.option(tie('body'), { nil: null })).map(([c, a, b]) =>
      `{{if ${c}}}${a}${b === null ? '' : `{{else}}${b}`}{{end}}`),
    fc.tuple(expr, expr, tie('body'), tie('body')).map(([c, d, a, b]) => `{{if ${c}}}${a}{{else if ${d}}}${b}{{end}}`),
    fc.tuple(expr, tie('body'), fc.option(tie('body'), { nil: null })).map(([c, a, b]) =>
      `{{with ${c}}}${a}${b === null ? '' : `{{else}}${b}`}{{end}}`),
    fc.tuple(expr, tie('body'), fc.option(tie('body'), { nil: null }), fc.constantFrom('', '$v := ', '$i, $v := '), fc.constantFrom('', '{{break}}', '{{continue}}', '{{if eq $.n 3}}{{break}}{{end}}'))
      .map(([c, a, b, decl, ctl]) => {
        const uses = decl === '' ? '' : decl.startsWith('$i') ? '{{$i}}:{{$v}}' : '{{$v}}'
        return `{{range ${decl}${c}}}${uses}${a}${ctl}${b === null ? '' : `{{else}}${b}`}{{end}}`
      }),
    fc.tuple(expr, tie('body')).map(([e, a]) => `{{$x := ${e}}}${a}{{$x}}{{$x = 1}}{{$x}}`),
    fc.constantFrom('{{/* c */}}', '{{- /* c */ -}}', '{{"{{"}}'),
  ),
})).body

/** Template-ish noise: random text over the characters that matter to the lexer and parser. */
export const noiseArb: fc.Arbitrary<string> = fc
  .array(fc.constantFrom('{{', '}}', '{{-', '-}}', ' ', '.', '$', '|', '(', ')', '"', '`', "'", '\\', 'if', 'else', 'end', 'range', 'with', 'break',
    'continue', ':=', '=', ',', 'x', '.a', '1', '-1', '2.5', 'printf', 'len', 'index', '/*', '*/', '\n', 'nil', 'true', '0x', 'é', '\u0000',
    'define', 'template', 'block', '"x"', '"y"', '{{define "x"}}', '{{template "x" .}}'), { maxLength: 40 })
  .map((xs) => xs.join(''))

export const DATA = {
  name: 'web', n: 3, zero: 0, neg: -7, f: 2.5, big: 1234567, bigf: 1234567.5, tiny: 0.00001, t: true, fl: false, empty: '', nul: null,
  list: ['a', 'b', 'c'], nums: [3, 1, 2], emptyList: [], nested: { a: { b: { c: 'deep' } } }, m: { z: 1, a: 2, m: 'x' }, emptyMap: {},
  s: 'Hello, World', uni: 'héllo ß', multi: 'l1\nl2', q: 'say "hi"\t<&>', items: [{ name: 'a', port: 80 }, { name: 'b', port: 443, tls: true }],
  mixed: [1, 'two', 3.5, true, null, { k: 'v' }, [1, 2]], keys: { 'with-dash': 1, B: 2, a: 3 }, labels: { app: 'web' }, port: '8080',
}

/** JSON-like data of bounded size, hostile strings included. */
export const dataArb: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ maxLength: 20 }),
    fc.constantFrom('a\nkind: Secret', '---', '{{ .x }}', '"', "'", '\\', 'key: value', '- item', '&a', '*a', '!!binary', '#', '%TAG'),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom('name', 'n', 'list', 'm', 'a', 'constructor', '__proto__', 'toString', 'x'), tie('value'), { maxKeys: 4 }),
  ),
})).value
