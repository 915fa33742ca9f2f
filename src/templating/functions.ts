// The template functions: Go's builtins (text/template/funcs.go, Go 1.19) and the Helm/Sprig-like ones,
// each declared with the Go parameter types that decide how its arguments are checked.
import YAML from 'yaml'
import { formatFloat, quoteGo, sprint, sprintf, sprintln } from './fmt.ts'
import { compareGoStrings, isTrue, sortedKeys, toPlain, typeName, type GoValue } from './values.ts'

/** Go parameter types the engine distinguishes: `any` (interface{}), `value` (reflect.Value), int, string. */
export type ParamType = 'any' | 'value' | 'int' | 'string'

export interface CallContext {
  /** Longest string a function may build (the output limit): stops doubling tricks inside loops. */
  readonly maxLength: number
  /** Manifest mode: remembers that `text` is YAML/JSON/quoted syntax produced from `value`. */
  recordSyntax(text: string, value: GoValue): void
  syntaxOf(text: string): GoValue | typeof NO_SYNTAX
}
export const NO_SYNTAX = Symbol('no-syntax')

export interface FuncSpec {
  params: ParamType[]
  variadic?: ParamType
  call(args: GoValue[], ctx: CallContext): GoValue
}

/** An error a function returns (Go: the error result), reported as "error calling NAME: ...". */
export class FuncError extends Error {}

function checkLength(s: string, ctx: CallContext): string {
  if (s.length > ctx.maxLength) throw new FuncError(`result longer than ${ctx.maxLength} characters`)
  return s
}

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder()

// ---- comparisons (funcs.go) ----

type Kind = 'invalid' | 'bool' | 'int' | 'float' | 'string'
function basicKind(v: GoValue): Kind {
  switch (typeof v) {
    case 'boolean': return 'bool'
    case 'bigint': return 'int'
    case 'number': return 'float'
    case 'string': return 'string'
  }
  return 'invalid'
}
const isZero = (v: GoValue) => v === undefined || v === null

function eq(arg1: GoValue, rest: GoValue[]): boolean {
  if (rest.length === 0) throw new FuncError('missing argument for comparison')
  const k1 = basicKind(arg1)
  for (const arg of rest) {
    const k2 = basicKind(arg)
    let truth = false
    if (k1 !== k2) {
      if (!isZero(arg1) && !isZero(arg)) throw new FuncError('incompatible types for comparison')
    } else if (k1 !== 'invalid') {
      truth = arg1 === arg
    } else {
      // Both non-basic: only nil compares; slices and maps are not comparable in Go.
      const n1 = isZero(arg1)
      const n2 = isZero(arg)
      const kindOf = (v: GoValue) => (isZero(v) ? 'nil' : Array.isArray(v) ? 'slice' : 'map')
      if (!n1 && !n2 && kindOf(arg1) !== kindOf(arg)) throw new FuncError(`non-comparable types ${typeName(arg1)}, ${typeName(arg)}`)
      if (n1 || n2) truth = n1 === n2
      else throw new FuncError(`non-comparable type ${typeName(arg)}`)
    }
    if (truth) return true
  }
  return false
}

function lt(a: GoValue, b: GoValue): boolean {
  const k1 = basicKind(a)
  const k2 = basicKind(b)
  if (k1 === 'invalid' || k2 === 'invalid') throw new FuncError('invalid type for comparison')
  if (k1 !== k2) throw new FuncError('incompatible types for comparison')
  if (k1 === 'bool') throw new FuncError('invalid type for comparison')
  if (k1 === 'string') return compareGoStrings(a as string, b as string) < 0
  return (a as number | bigint) < (b as number | bigint)
}
const le = (a: GoValue, b: GoValue) => lt(a, b) || eq(a, [b])

// ---- index / slice / len ----

function indexArg(index: GoValue, cap: number): number {
  if (typeof index !== 'bigint') {
    if (isZero(index)) throw new FuncError('cannot index slice/array with nil')
    throw new FuncError(`cannot index slice/array with type ${typeName(index)}`)
  }
  if (index < 0n || index > BigInt(cap)) throw new FuncError(`index out of range: ${index}`)
  return Number(index)
}

function index(item: GoValue, indexes: GoValue[]): GoValue {
  if (isZero(item)) throw new FuncError('index of untyped nil')
  for (const ix of indexes) {
    if (isZero(item)) throw new FuncError('index of nil pointer')
    if (typeof item === 'string') {
      const bytes = utf8.encode(item)
      const x = indexArg(ix, bytes.length)
      if (x >= bytes.length) throw new FuncError(`reflect: string index out of range`)
      item = BigInt(bytes[x])
    } else if (Array.isArray(item)) {
      const x = indexArg(ix, item.length)
      if (x >= item.length) throw new FuncError(`reflect: slice index out of range`)
      item = item[x]
    } else if (item instanceof Map) {
      if (isZero(ix)) throw new FuncError('value is nil; should be of type string')
      if (typeof ix !== 'string') throw new FuncError(`value has type ${typeName(ix)}; should be string`)
      item = item.has(ix) ? item.get(ix) : null
    } else {
      throw new FuncError(`can't index item of type ${typeName(item)}`)
    }
  }
  return item
}

function slice(item: GoValue, indexes: GoValue[]): GoValue {
  if (isZero(item)) throw new FuncError('slice of untyped nil')
  if (indexes.length > 3) throw new FuncError(`too many slice indexes: ${indexes.length}`)
  let len: number
  let bytes: Uint8Array | null = null
  if (typeof item === 'string') {
    if (indexes.length === 3) throw new FuncError('cannot 3-index slice a string')
    bytes = utf8.encode(item)
    len = bytes.length
  } else if (Array.isArray(item)) {
    len = item.length
  } else {
    throw new FuncError(`can't slice item of type ${typeName(item)}`)
  }
  const idx = [0, len, len]
  indexes.forEach((ix, i) => { idx[i] = indexArg(ix, len) })
  if (idx[0] > idx[1]) throw new FuncError(`invalid slice index: ${idx[0]} > ${idx[1]}`)
  if (indexes.length === 3 && idx[1] > idx[2]) throw new FuncError(`invalid slice index: ${idx[1]} > ${idx[2]}`)
  if (bytes !== null) return utf8Decoder.decode(bytes.slice(idx[0], idx[1]))
  return (item as GoValue[]).slice(idx[0], idx[1])
}

function length(item: GoValue): GoValue {
  if (item === null) throw new FuncError('len of nil pointer')
  if (item === undefined) throw new FuncError('len of untyped nil')
  if (typeof item === 'string') return BigInt(utf8.encode(item).length)
  if (Array.isArray(item)) return BigInt(item.length)
  if (item instanceof Map) return BigInt(item.size)
  throw new FuncError(`len of type ${typeName(item)}`)
}

// ---- escapers ----

/** text/template's evalArgs: one string argument as is, otherwise fmt.Sprint with missing values as <no value>. */
function evalArgs(args: GoValue[], ctx: CallContext): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0]
  return sprint(args.map((a) => (a === undefined ? '<no value>' : a)), ctx.maxLength)
}

function htmlEscape(s: string): string {
  return s.replace(/[\0"'&<>]/g, (c) => ({ '\0': '\ufffd', '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!)
}

function jsEscape(s: string): string {
  let out = ''
  for (const ch of s) {
    const cp = ch.codePointAt(0)!
    switch (ch) {
      case '\\': out += '\\\\'; continue
      case "'": out += "\\'"; continue
      case '"': out += '\\"'; continue
      case '<': out += '\\u003C'; continue
      case '>': out += '\\u003E'; continue
      case '&': out += '\\u0026'; continue
      case '=': out += '\\u003D'; continue
    }
    if (cp < 0x20) out += '\\u00' + cp.toString(16).toUpperCase().padStart(2, '0')
    else if (cp < 0x80) out += ch
    else if (/^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch) || ch === ' ') out += ch
    else out += '\\u' + cp.toString(16).toUpperCase().padStart(4, '0')
  }
  return out
}

function urlQueryEscape(s: string): string {
  let out = ''
  for (const b of utf8.encode(s)) {
    const c = String.fromCharCode(b)
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c
    else if (c === ' ') out += '+'
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0')
  }
  return out
}

// ---- Sprig-like helpers ----

/** Sprig's strval: the %v form of a value. */
function strval(v: GoValue, ctx: CallContext): string {
  return typeof v === 'string' ? v : sprint([v], ctx.maxLength)
}

/** Go's unicode.IsSpace, as strings.TrimSpace uses it. */
function isGoSpace(cp: number): boolean {
  return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d) || cp === 0x85 || cp === 0xa0 || cp === 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 || cp === 0x2029 || cp === 0x202f || cp === 0x205f || cp === 0x3000
}
function trimSpace(s: string): string {
  const cps = [...s]
  let a = 0
  let b = cps.length
  while (a < b && isGoSpace(cps[a].codePointAt(0)!)) a++
  while (b > a && isGoSpace(cps[b - 1].codePointAt(0)!)) b--
  return cps.slice(a, b).join('')
}

/** strings.ToUpper/ToLower use simple (one-to-one) case mapping; JS's multi-character mappings are skipped. */
function mapCase(s: string, upper: boolean): string {
  let out = ''
  for (const ch of s) {
    if (!upper && ch === '\u0130') { out += 'i'; continue }
    const m = upper ? ch.toUpperCase() : ch.toLowerCase()
    out += [...m].length === 1 ? m : ch
  }
  return out
}

/** strings.Replace(s, old, new, -1), including Go's rune-wise behaviour for an empty `old`. */
function replaceAll(s: string, old: string, repl: string, ctx: CallContext): string {
  if (old === '') {
    const cps = [...s]
    // Checked before building: a long s and a long repl would otherwise build a string of |s|·|repl|.
    if (s.length + (cps.length + 1) * repl.length > ctx.maxLength) throw new FuncError(`result longer than ${ctx.maxLength} characters`)
    return repl + cps.map((c) => c + repl).join('')
  }
  const count = s.split(old).length - 1
  if (s.length + count * (repl.length - old.length) > ctx.maxLength) throw new FuncError(`result longer than ${ctx.maxLength} characters`)
  return s.split(old).join(repl)
}

function indent(spaces: bigint, v: string, ctx: CallContext): string {
  if (spaces < 0n) throw new FuncError('strings: negative Repeat count')
  if (spaces > BigInt(ctx.maxLength)) throw new FuncError(`result longer than ${ctx.maxLength} characters`)
  const pad = ' '.repeat(Number(spaces))
  const lines = v.split('\n').length
  if (v.length + lines * pad.length > ctx.maxLength) throw new FuncError(`result longer than ${ctx.maxLength} characters`)
  return pad + v.replaceAll('\n', '\n' + pad)
}

/** encoding/json's Marshal (HTML-escaped, sorted keys) of a value; "" when Go would fail (NaN, ±Inf). */
export function goJson(v: GoValue): string | null {
  switch (typeof v) {
    case 'undefined': return 'null'
    case 'boolean': return String(v)
    case 'bigint': return v.toString()
    case 'number': {
      if (!Number.isFinite(v)) return null
      const abs = Math.abs(v)
      const fmt = abs !== 0 && (abs < 1e-6 || abs >= 1e21) ? 'e' : 'f'
      let s = formatFloat(v, fmt, -1)
      if (fmt === 'e') s = s.replace(/e-0(\d)$/, 'e-$1')
      return s
    }
    case 'string': return jsonString(v)
  }
  if (v === null) return 'null'
  if (Array.isArray(v)) {
    const parts: string[] = []
    for (const e of v) {
      const s = goJson(e)
      if (s === null) return null
      parts.push(s)
    }
    return '[' + parts.join(',') + ']'
  }
  const parts: string[] = []
  for (const k of sortedKeys(v)) {
    const s = goJson(v.get(k))
    if (s === null) return null
    parts.push(jsonString(k) + ':' + s)
  }
  return '{' + parts.join(',') + '}'
}

function jsonString(s: string): string {
  let out = '"'
  for (const ch of s) {
    const cp = ch.codePointAt(0)!
    if (cp >= 0xd800 && cp <= 0xdfff) { out += '\ufffd'; continue }
    switch (ch) {
      case '"': out += '\\"'; continue
      case '\\': out += '\\\\'; continue
      case '\n': out += '\\n'; continue
      case '\r': out += '\\r'; continue
      case '\t': out += '\\t'; continue
      case '<': case '>': case '&': out += '\\u00' + cp.toString(16); continue
      case '\u2028': out += '\\u2028'; continue
      case '\u2029': out += '\\u2029'; continue
    }
    out += cp < 0x20 ? '\\u00' + cp.toString(16).padStart(2, '0') : ch
  }
  return out + '"'
}

/** Helm's toYaml: the value as YAML (sorted keys, block style), without the final newline. */
export function goYaml(v: GoValue): string {
  const text = YAML.stringify(toPlain(v), { indentSeq: false, sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false })
  return text.endsWith('\n') ? text.slice(0, -1) : text
}

const base64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')

export const FUNCTIONS: Readonly<Record<string, FuncSpec>> = Object.freeze({
  // Go builtins (and/or are evaluated lazily by the executor; their entries give the signature).
  and: { params: ['value'], variadic: 'value', call: () => { throw new FuncError('unreachable') } },
  or: { params: ['value'], variadic: 'value', call: () => { throw new FuncError('unreachable') } },
  not: { params: ['value'], call: ([a]) => !isTrue(a) },
  len: { params: ['value'], call: ([a]) => length(a) },
  index: { params: ['value'], variadic: 'value', call: ([item, ...ix]) => index(item, ix) },
  slice: { params: ['value'], variadic: 'value', call: ([item, ...ix]) => slice(item, ix) },
  eq: { params: ['value'], variadic: 'value', call: ([a, ...rest]) => eq(a, rest) },
  ne: { params: ['value', 'value'], call: ([a, b]) => !eq(a, [b]) },
  lt: { params: ['value', 'value'], call: ([a, b]) => lt(a, b) },
  le: { params: ['value', 'value'], call: ([a, b]) => le(a, b) },
  gt: { params: ['value', 'value'], call: ([a, b]) => !le(a, b) },
  ge: { params: ['value', 'value'], call: ([a, b]) => !lt(a, b) },
  print: { params: [], variadic: 'any', call: (args, ctx) => sprint(args, ctx.maxLength) },
  printf: { params: ['string'], variadic: 'any', call: ([f, ...args], ctx) => sprintf(f as string, args, ctx.maxLength) },
  println: { params: [], variadic: 'any', call: (args, ctx) => sprintln(args, ctx.maxLength) },
  html: { params: [], variadic: 'any', call: (args, ctx) => checkLength(htmlEscape(evalArgs(args, ctx)), ctx) },
  js: { params: [], variadic: 'any', call: (args, ctx) => checkLength(jsEscape(evalArgs(args, ctx)), ctx) },
  urlquery: { params: [], variadic: 'any', call: (args, ctx) => checkLength(urlQueryEscape(evalArgs(args, ctx)), ctx) },

  // Helm / Sprig
  default: { params: ['any'], variadic: 'any', call: ([d, ...given]) => (given.length === 0 || !isTrue(given[0]) ? d : given[0]) },
  quote: {
    params: [], variadic: 'any',
    call: (args, ctx) => {
      const present = args.filter((a) => a !== undefined && a !== null)
      const text = checkLength(present.map((a) => quoteGo(strval(a, ctx))).join(' '), ctx)
      if (present.length === 1) ctx.recordSyntax(text, strval(present[0], ctx))
      return text
    },
  },
  toYaml: {
    params: ['any'],
    call: ([v], ctx) => {
      const text = checkLength(goYaml(v), ctx)
      ctx.recordSyntax(text, v === undefined ? null : v)
      return text
    },
  },
  toJson: {
    params: ['any'],
    call: ([v], ctx) => {
      const text = checkLength(goJson(v) ?? '', ctx)
      if (text !== '') ctx.recordSyntax(text, v === undefined ? null : v)
      return text
    },
  },
  indent: {
    params: ['int', 'string'],
    call: ([n, s], ctx) => {
      const text = indent(n as bigint, s as string, ctx)
      const v = ctx.syntaxOf(s as string)
      if (v !== NO_SYNTAX) ctx.recordSyntax(text, v)
      return text
    },
  },
  nindent: {
    params: ['int', 'string'],
    call: ([n, s], ctx) => {
      const text = '\n' + indent(n as bigint, s as string, ctx)
      const v = ctx.syntaxOf(s as string)
      if (v !== NO_SYNTAX) ctx.recordSyntax(text, v)
      return text
    },
  },
  b64enc: { params: ['string'], call: ([s], ctx) => checkLength(base64(s as string), ctx) },
  lower: { params: ['string'], call: ([s]) => mapCase(s as string, false) },
  upper: { params: ['string'], call: ([s]) => mapCase(s as string, true) },
  trim: { params: ['string'], call: ([s]) => trimSpace(s as string) },
  replace: { params: ['string', 'string', 'string'], call: ([o, n, s], ctx) => replaceAll(s as string, o as string, n as string, ctx) },
  required: {
    params: ['string', 'any'],
    call: ([msg, v]) => {
      if (v === undefined || v === null || v === '') throw new FuncError(msg as string)
      return v
    },
  },
})

export const FUNCTION_NAMES: ReadonlySet<string> = new Set(Object.keys(FUNCTIONS))
