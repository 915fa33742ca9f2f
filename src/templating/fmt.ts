// Go's fmt (print, println, printf and %v) for the engine's value model, byte for byte for the verbs
// %v %s %d %q %f %F %e %E %g %G %x %X %o %O %b %c %U %t %T and the flags + - # 0 space, width, precision,
// `*` and explicit argument indexes. Not supported (printed as %!verb(...)): %p, %b/%x on floats.
import { sortedKeys, typeName, type GoValue } from './values.ts'

export class FormatLimitError extends Error {}

const NIL_ANGLE = '<nil>'

function runeCount(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
    n++
  }
  return n
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u
function isPrint(cp: number): boolean {
  if (cp < 0x20 || cp === 0x7f) return false
  if (cp < 0x7f) return true
  return PRINTABLE.test(String.fromCodePoint(cp))
}
function isGraphicSpace(cp: number): boolean {
  return cp === 0x00a0 || cp === 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp === 0x202f || cp === 0x205f || cp === 0x3000
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0')
}

function escapeRune(cp: number, quote: number, asciiOnly: boolean, graphicOnly: boolean): string {
  if (cp === quote || cp === 0x5c) return '\\' + String.fromCodePoint(cp)
  if (asciiOnly) {
    if (cp < 0x80 && isPrint(cp)) return String.fromCodePoint(cp)
  } else if (isPrint(cp) || (graphicOnly && isGraphicSpace(cp))) {
    return String.fromCodePoint(cp)
  }
  switch (cp) {
    case 0x07: return '\\a'
    case 0x08: return '\\b'
    case 0x0c: return '\\f'
    case 0x0a: return '\\n'
    case 0x0d: return '\\r'
    case 0x09: return '\\t'
    case 0x0b: return '\\v'
  }
  if (cp < 0x20 || cp === 0x7f) return '\\x' + hex(cp, 2)
  if (cp > 0x10ffff) cp = 0xfffd
  if (cp < 0x10000) return '\\u' + hex(cp, 4)
  return '\\U' + hex(cp, 8)
}

function codePoints(s: string): number[] {
  const out: number[] = []
  for (const ch of s) {
    const cp = ch.codePointAt(0)!
    out.push(cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp)
  }
  return out
}

/** strconv.Quote (and QuoteToASCII when asciiOnly). */
export function quoteGo(s: string, asciiOnly = false): string {
  let out = '"'
  for (const cp of codePoints(s)) out += escapeRune(cp, 0x22, asciiOnly, false)
  return out + '"'
}

function quoteRune(cp: number, asciiOnly: boolean): string {
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd
  return "'" + escapeRune(cp, 0x27, asciiOnly, false) + "'"
}

function canBackquote(s: string): boolean {
  for (const cp of codePoints(s)) {
    if (cp === 0xfeff) return false
    if (cp === 0x60 || cp === 0xfffd) return false
    if (cp < 0x20 && cp !== 0x09) return false
    if (cp === 0x7f) return false
  }
  return true
}

const utf8 = new TextEncoder()

// ---- floats -------------------------------------------------------------------------------------------

interface Digits { d: string; dp: number } // value = 0.d × 10^dp, no trailing zeros

function exactDigits(x: number): Digits {
  if (x === 0) return { d: '', dp: 0 }
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, x)
  const bits = view.getBigUint64(0)
  const biasedExp = Number((bits >> 52n) & 0x7ffn)
  let mant = bits & 0xfffffffffffffn
  let exp: number
  if (biasedExp === 0) exp = -1074
  else {
    mant |= 1n << 52n
    exp = biasedExp - 1075
  }
  let d: string
  let dp: number
  if (exp >= 0) {
    d = (mant << BigInt(exp)).toString()
    dp = d.length
  } else {
    d = (mant * 5n ** BigInt(-exp)).toString()
    dp = d.length + exp
  }
  return trimDigits({ d, dp })
}

function trimDigits(x: Digits): Digits {
  let end = x.d.length
  while (end > 0 && x.d[end - 1] === '0') end--
  if (end === 0) return { d: '', dp: 0 }
  return { d: x.d.slice(0, end), dp: x.dp }
}

/** Go's decimal.Round(nd): round half to even on the exact digits. */
function roundDigits(x: Digits, nd: number): Digits {
  if (nd < 0 || nd >= x.d.length) return x
  const next = x.d.charCodeAt(nd) - 48
  let up: boolean
  if (next === 5 && nd + 1 === x.d.length) up = nd > 0 && (x.d.charCodeAt(nd - 1) - 48) % 2 === 1
  else up = next >= 5
  if (!up) return trimDigits({ d: x.d.slice(0, nd), dp: x.dp })
  let i = nd - 1
  while (i >= 0 && x.d[i] === '9') i--
  if (i < 0) return { d: '1', dp: x.dp + 1 }
  return trimDigits({ d: x.d.slice(0, i) + String.fromCharCode(x.d.charCodeAt(i) + 1), dp: x.dp })
}

function shortestDigits(x: number): Digits {
  if (x === 0) return { d: '', dp: 0 }
  const [m, e] = x.toExponential().split('e')
  return trimDigits({ d: m.replace('.', ''), dp: Number(e) + 1 })
}

function fmtE(digs: Digits, prec: number, ch: string): string {
  let out = digs.d.length > 0 ? digs.d[0] : '0'
  if (prec > 0) {
    out += '.'
    let i = 1
    const m = Math.min(digs.d.length, prec + 1)
    if (i < m) {
      out += digs.d.slice(i, m)
      i = m
    }
    for (; i <= prec; i++) out += '0'
  }
  out += ch
  let exp = digs.dp - 1
  if (digs.d.length === 0) exp = 0
  out += exp < 0 ? '-' : '+'
  exp = Math.abs(exp)
  out += exp < 10 ? '0' + exp : String(exp)
  return out
}

function fmtF(digs: Digits, prec: number): string {
  let out = ''
  if (digs.dp > 0) {
    const m = Math.min(digs.d.length, digs.dp)
    out += digs.d.slice(0, m)
    for (let i = m; i < digs.dp; i++) out += '0'
  } else out += '0'
  if (prec > 0) {
    out += '.'
    for (let i = 1; i <= prec; i++) {
      const j = digs.dp + i - 1
      out += j >= 0 && j < digs.d.length ? digs.d[j] : '0'
    }
  }
  return out
}

function floatBits(x: number): { neg: boolean; mant: bigint; exp: number } {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, x)
  const bits = view.getBigUint64(0)
  let exp = Number((bits >> 52n) & 0x7ffn)
  let mant = bits & 0xfffffffffffffn
  if (exp === 0) exp++
  else mant |= 1n << 52n
  return { neg: bits >> 63n === 1n, mant, exp: exp - 1023 }
}

const MASK64 = (1n << 64n) - 1n

/** strconv's %x/%X: -0x1.yyyyp±dd */
function fmtX(x: number, prec: number, fmt: string): string {
  let { neg, mant, exp } = floatBits(x)
  if (mant === 0n) exp = 0
  mant = (mant << 8n) & MASK64
  while (mant !== 0n && (mant & (1n << 60n)) === 0n) {
    mant = (mant << 1n) & MASK64
    exp--
  }
  if (prec >= 0 && prec < 15) {
    const shift = BigInt(prec * 4)
    const extra = (mant << shift) & ((1n << 60n) - 1n)
    mant >>= 60n - shift
    if ((extra | (mant & 1n)) > 1n << 59n) mant++
    mant = (mant << (60n - shift)) & MASK64
    if ((mant & (1n << 61n)) !== 0n) {
      mant >>= 1n
      exp++
    }
  }
  const hexDigits = fmt === 'X' ? '0123456789ABCDEF' : '0123456789abcdef'
  let out = (neg ? '-' : '') + '0' + fmt + String((mant >> 60n) & 1n)
  mant = (mant << 4n) & MASK64
  if (prec < 0 && mant !== 0n) {
    out += '.'
    while (mant !== 0n) {
      out += hexDigits[Number((mant >> 60n) & 15n)]
      mant = (mant << 4n) & MASK64
    }
  } else if (prec > 0) {
    out += '.'
    for (let i = 0; i < prec; i++) {
      out += hexDigits[Number((mant >> 60n) & 15n)]
      mant = (mant << 4n) & MASK64
    }
  }
  out += fmt === 'X' ? 'P' : 'p'
  out += exp < 0 ? '-' : '+'
  exp = Math.abs(exp)
  out += exp < 10 ? '0' + exp : String(exp)
  return out
}

/** strconv.FormatFloat(x, fmt, prec, 64) for fmt in b e E f g G x X. */
export function formatFloat(x: number, fmt: string, prec: number): string {
  if (Number.isNaN(x)) return 'NaN'
  if (x === Infinity) return '+Inf'
  if (x === -Infinity) return '-Inf'
  if (fmt === 'x' || fmt === 'X') return fmtX(x, prec, fmt)
  if (fmt === 'b') {
    const { neg, mant, exp } = floatBits(x)
    const e = exp - 52
    return `${neg ? '-' : ''}${mant}p${e >= 0 ? '+' : '-'}${Math.abs(e)}`
  }
  const neg = x < 0 || Object.is(x, -0)
  const abs = Math.abs(x)
  const shortest = prec < 0
  let digs: Digits
  if (shortest) {
    digs = shortestDigits(abs)
    if (fmt === 'e' || fmt === 'E') prec = Math.max(digs.d.length - 1, 0)
    else if (fmt === 'f') prec = Math.max(digs.d.length - digs.dp, 0)
    else prec = digs.d.length
  } else {
    const exact = exactDigits(abs)
    if (fmt === 'e' || fmt === 'E') digs = roundDigits(exact, prec + 1)
    else if (fmt === 'f') digs = roundDigits(exact, exact.dp + prec)
    else {
      if (prec === 0) prec = 1
      digs = roundDigits(exact, prec)
    }
  }
  let body: string
  if (fmt === 'e' || fmt === 'E') body = fmtE(digs, prec, fmt)
  else if (fmt === 'f') body = fmtF(digs, prec)
  else {
    let eprec = prec
    if (eprec > digs.d.length && digs.d.length >= digs.dp) eprec = digs.d.length
    if (shortest) eprec = 6
    const exp = digs.dp - 1
    if (exp < -4 || exp >= eprec) {
      if (prec > digs.d.length) prec = digs.d.length
      body = fmtE(digs, prec - 1, fmt === 'g' ? 'e' : 'E')
    } else {
      if (prec > digs.dp) prec = digs.d.length
      body = fmtF(digs, Math.max(prec - digs.dp, 0))
    }
  }
  return (neg ? '-' : '') + body
}

// ---- the printer --------------------------------------------------------------------------------------

class Printer {
  buf = ''
  // flags
  plus = false; minus = false; sharp = false; space = false; zero = false
  plusV = false; sharpV = false
  wid = 0; widPresent = false
  prec = 0; precPresent = false
  constructor(private readonly maxLength: number) {}

  clearFlags(): void {
    this.plus = this.minus = this.sharp = this.space = this.zero = false
    this.plusV = this.sharpV = false
    this.wid = 0; this.widPresent = false
    this.prec = 0; this.precPresent = false
  }
  write(s: string): void {
    this.buf += s
    if (this.buf.length > this.maxLength) throw new FormatLimitError(`formatted text longer than ${this.maxLength} characters`)
  }
  writePadding(n: number): void {
    if (n <= 0) return
    if (n > this.maxLength) throw new FormatLimitError(`formatted text longer than ${this.maxLength} characters`)
    this.write((this.zero ? '0' : ' ').repeat(n))
  }
  pad(s: string): void {
    if (!this.widPresent || this.wid === 0) {
      this.write(s)
      return
    }
    const width = this.wid - runeCount(s)
    if (!this.minus) {
      this.writePadding(width)
      this.write(s)
    } else {
      this.write(s)
      this.writePadding(width)
    }
  }
  truncate(s: string): string {
    if (this.precPresent) {
      const cps = [...s]
      if (cps.length > this.prec) return cps.slice(0, this.prec).join('')
    }
    return s
  }

  badVerb(verb: string, v: GoValue): void {
    this.write('%!' + verb + '(')
    const t = typeName(v)
    if (t === null) this.write(NIL_ANGLE)
    else {
      // Go prints the value with %v but keeps the width, precision and flags of the bad verb.
      this.write(t + '=')
      this.printValue(v, 'v', 0)
    }
    this.write(')')
  }
  fmtBool(v: boolean, verb: string): void {
    if (verb === 't' || verb === 'v') this.pad(v ? 'true' : 'false')
    else this.badVerb(verb, v)
  }

  fmtIntegerBase(v: bigint, base: number, verb: string, upper: boolean): void {
    const negative = v < 0n
    const u = negative ? -v : v
    let prec = 0
    if (this.precPresent) {
      prec = this.prec
      if (prec === 0 && u === 0n) {
        const oldZero = this.zero
        this.zero = false
        this.writePadding(this.wid)
        this.zero = oldZero
        return
      }
    } else if (this.zero && this.widPresent) {
      prec = this.wid
      if (negative || this.plus || this.space) prec--
    }
    if (prec > this.maxLength) throw new FormatLimitError(`formatted text longer than ${this.maxLength} characters`)
    let digits = u.toString(base)
    if (upper) digits = digits.toUpperCase()
    if (digits.length < prec) digits = '0'.repeat(prec - digits.length) + digits
    if (this.sharp) {
      if (base === 2) digits = '0b' + digits
      else if (base === 8) { if (digits[0] !== '0') digits = '0' + digits }
      else if (base === 16) digits = (upper ? '0X' : '0x') + digits
    }
    if (verb === 'O') digits = '0o' + digits
    if (negative) digits = '-' + digits
    else if (this.plus) digits = '+' + digits
    else if (this.space) digits = ' ' + digits
    const oldZero = this.zero
    this.zero = false
    this.pad(digits)
    this.zero = oldZero
  }

  fmtInteger(v: bigint, verb: string): void {
    switch (verb) {
      case 'v': case 'd': return this.fmtIntegerBase(v, 10, verb, false)
      case 'b': return this.fmtIntegerBase(v, 2, verb, false)
      case 'o': case 'O': return this.fmtIntegerBase(v, 8, verb, false)
      case 'x': return this.fmtIntegerBase(v, 16, verb, false)
      case 'X': return this.fmtIntegerBase(v, 16, verb, true)
      case 'c': {
        const cp = v < 0n || v > 0x10ffffn || (v >= 0xd800n && v <= 0xdfffn) ? 0xfffd : Number(v)
        return this.pad(String.fromCodePoint(cp))
      }
      case 'q': {
        const cp = v < 0n || v > 0x10ffffn ? 0xfffd : Number(v)
        return this.pad(this.sharp && cp < 0x10000 && canBackquote(String.fromCodePoint(cp)) && isPrint(cp) ? "'" + String.fromCodePoint(cp) + "'" : quoteRune(cp, this.plus))
      }
      case 'U': {
        let s = 'U+' + (v < 0n ? BigInt.asUintN(64, v) : v).toString(16).toUpperCase().padStart(4, '0')
        if (this.precPresent && this.prec > 4) s = 'U+' + (v < 0n ? BigInt.asUintN(64, v) : v).toString(16).toUpperCase().padStart(this.prec, '0')
        if (this.sharp && v >= 0n && v <= 0x10ffffn && isPrint(Number(v))) s += " '" + String.fromCodePoint(Number(v)) + "'"
        const oldZero = this.zero
        this.zero = false
        this.pad(s)
        this.zero = oldZero
        return
      }
      default: return this.badVerb(verb, v)
    }
  }

  fmtFloatVerb(v: number, verb: string, prec: number): void {
    if (this.precPresent) prec = this.prec
    let num = formatFloat(v, verb === 'F' ? 'f' : verb, prec)
    if (num[0] !== '-' && num[0] !== '+') num = '+' + num
    if (this.space && num[0] === '+' && !this.plus) num = ' ' + num.slice(1)
    if (num[1] === 'I' || num[1] === 'N') {
      const oldZero = this.zero
      this.zero = false
      if (num[1] === 'N' && !this.space && !this.plus) num = num.slice(1)
      this.pad(num)
      this.zero = oldZero
      return
    }
    if (this.sharp && verb !== 'b') {
      let digits = 0
      if (verb === 'v' || verb === 'g' || verb === 'G' || verb === 'x') {
        digits = prec
        if (digits === -1) digits = 6
      }
      let tail = ''
      let hasDecimalPoint = false
      let sawNonzeroDigit = false
      for (let i = 1; i < num.length; i++) {
        const c = num[i]
        if (c === '.') hasDecimalPoint = true
        else if (c === 'p' || c === 'P' || ((c === 'e' || c === 'E') && verb !== 'x' && verb !== 'X')) {
          tail = num.slice(i)
          num = num.slice(0, i)
          break
        } else {
          if (c !== '0') sawNonzeroDigit = true
          if (sawNonzeroDigit) digits--
        }
      }
      if (!hasDecimalPoint) {
        if (num.length === 2 && num[1] === '0') digits--
        num += '.'
      }
      while (digits > 0) {
        num += '0'
        digits--
      }
      num += tail
    }
    if (this.plus || num[0] !== '+') {
      if (this.zero && this.widPresent && this.wid > num.length) {
        this.write(num[0])
        this.writePadding(this.wid - num.length)
        this.write(num.slice(1))
        return
      }
      this.pad(num)
      return
    }
    this.pad(num.slice(1))
  }

  fmtFloat(v: number, verb: string): void {
    switch (verb) {
      case 'v': return this.fmtFloatVerb(v, 'g', -1)
      case 'b': case 'g': case 'G': case 'x': case 'X': return this.fmtFloatVerb(v, verb, -1)
      case 'f': case 'e': case 'E': case 'F': return this.fmtFloatVerb(v, verb, 6)
      default: return this.badVerb(verb, v)
    }
  }

  fmtSx(s: string, upper: boolean): void {
    let bytes = utf8.encode(s)
    if (this.precPresent && this.prec < bytes.length) bytes = bytes.slice(0, this.prec)
    const digits = upper ? '0123456789ABCDEF' : '0123456789abcdef'
    let out = ''
    for (let i = 0; i < bytes.length; i++) {
      if (this.space && i > 0) out += ' '
      if (this.sharp && (this.space || i === 0)) out += upper ? '0X' : '0x'
      out += digits[bytes[i] >> 4] + digits[bytes[i] & 15]
    }
    this.pad(out)
  }

  fmtQ(s: string): void {
    s = this.truncate(s)
    if (this.sharp && canBackquote(s)) this.pad('`' + s + '`')
    else this.pad(quoteGo(s, this.plus))
  }

  fmtString(v: string, verb: string): void {
    switch (verb) {
      case 'v': return this.sharpV ? this.fmtQ(v) : this.pad(this.truncate(v))
      case 's': return this.pad(this.truncate(v))
      case 'x': return this.fmtSx(v, false)
      case 'X': return this.fmtSx(v, true)
      case 'q': return this.fmtQ(v)
      default: return this.badVerb(verb, v)
    }
  }

  /** One argument of a format string: for %v, `#` and `+` become Go-syntax and field-name flags (as Go's doPrintf). */
  printVerb(arg: GoValue, verb: string): void {
    if (verb === 'v') {
      this.sharpV = this.sharp
      this.sharp = false
      this.plusV = this.plus
      this.plus = false
    }
    this.printArg(arg, verb)
  }

  printArg(arg: GoValue, verb: string): void {
    if (arg === undefined || arg === null) {
      if (verb === 'T' || verb === 'v') this.pad(NIL_ANGLE)
      else this.badVerb(verb, arg)
      return
    }
    if (verb === 'T') return this.pad(this.truncate(typeName(arg)!))
    if (verb === 'p') return this.badVerb(verb, arg)
    this.printValue(arg, verb, 0)
  }

  printValue(v: GoValue, verb: string, depth: number): void {
    switch (typeof v) {
      case 'undefined': return this.write(this.sharpV ? 'interface {}(nil)' : NIL_ANGLE)
      case 'boolean': return this.fmtBool(v, verb)
      case 'bigint': return this.fmtInteger(v, verb)
      case 'number': return this.fmtFloat(v, verb)
      case 'string': return this.fmtString(v, verb)
    }
    if (v === null) return this.write(this.sharpV ? 'interface {}(nil)' : NIL_ANGLE)
    if (Array.isArray(v)) {
      if (this.sharpV) {
        this.write('[]interface {}{')
        v.forEach((e, i) => {
          if (i > 0) this.write(', ')
          this.printValue(e, verb, depth + 1)
        })
        return this.write('}')
      }
      this.write('[')
      v.forEach((e, i) => {
        if (i > 0) this.write(' ')
        this.printValue(e, verb, depth + 1)
      })
      return this.write(']')
    }
    this.write(this.sharpV ? 'map[string]interface {}{' : 'map[')
    sortedKeys(v).forEach((k, i) => {
      if (i > 0) this.write(this.sharpV ? ', ' : ' ')
      this.printValue(k, verb, depth + 1)
      this.write(':')
      this.printValue(v.get(k), verb, depth + 1)
    })
    this.write(this.sharpV ? '}' : ']')
  }
}

function isStringArg(v: GoValue): boolean {
  return typeof v === 'string'
}

/** fmt.Sprint */
export function sprint(args: GoValue[], maxLength: number): string {
  const p = new Printer(maxLength)
  let prevString = false
  args.forEach((arg, i) => {
    const isString = isStringArg(arg)
    if (i > 0 && !isString && !prevString) p.write(' ')
    p.printArg(arg, 'v')
    prevString = isString
  })
  return p.buf
}

/** fmt.Sprintln */
export function sprintln(args: GoValue[], maxLength: number): string {
  const p = new Printer(maxLength)
  args.forEach((arg, i) => {
    if (i > 0) p.write(' ')
    p.printArg(arg, 'v')
  })
  p.write('\n')
  return p.buf
}

function parsenum(s: string, start: number, end: number): { num: number; isnum: boolean; newi: number } {
  if (start >= end) return { num: 0, isnum: false, newi: end }
  let num = 0
  let isnum = false
  let newi = start
  for (; newi < end && s[newi] >= '0' && s[newi] <= '9'; newi++) {
    if (num > 1e6 || num < -1e6) return { num: 0, isnum: false, newi: end }
    num = num * 10 + (s.charCodeAt(newi) - 48)
    isnum = true
  }
  return { num, isnum, newi }
}

/** fmt.Sprintf */
export function sprintf(format: string, a: GoValue[], maxLength: number): string {
  const p = new Printer(maxLength)
  const end = format.length
  let argNum = 0
  let afterIndex = false
  let reordered = false
  let goodArgNum = true

  const argNumber = (i: number): { found: boolean; i: number } => {
    if (format.length <= i || format[i] !== '[') return { found: false, i }
    reordered = true
    const sub = format.slice(i)
    let index = 0
    let wid = 1
    let ok = false
    if (sub.length >= 3) {
      for (let j = 1; j < sub.length; j++) {
        if (sub[j] === ']') {
          const r = parsenum(sub, 1, j)
          if (!r.isnum || r.newi !== j) {
            wid = j + 1
            ok = false
          } else {
            index = r.num - 1
            wid = j + 1
            ok = true
          }
          break
        }
      }
    }
    if (ok && index >= 0 && index < a.length) {
      argNum = index
      return { found: true, i: i + wid }
    }
    goodArgNum = false
    return { found: ok, i: i + wid }
  }
  const intFromArg = (): { num: number; isInt: boolean } => {
    let num = 0
    let isInt = false
    if (argNum < a.length) {
      const v = a[argNum]
      if (typeof v === 'bigint' && v >= -(2n ** 63n) && v < 2n ** 63n) {
        num = Number(v)
        isInt = true
      }
      argNum++
      if (num > 1e6 || num < -1e6) {
        num = 0
        isInt = false
      }
    }
    return { num, isInt }
  }

  formatLoop: for (let i = 0; i < end;) {
    goodArgNum = true
    const lasti = i
    while (i < end && format[i] !== '%') i++
    if (i > lasti) p.write(format.slice(lasti, i))
    if (i >= end) break
    i++
    p.clearFlags()
    simple: for (; i < end; i++) {
      const c = format[i]
      switch (c) {
        case '#': p.sharp = true; break
        case '0': p.zero = !p.minus; break
        case '+': p.plus = true; break
        case '-': p.minus = true; p.zero = false; break
        case ' ': p.space = true; break
        default:
          if (c >= 'a' && c <= 'z' && argNum < a.length) {
            p.printVerb(a[argNum], c)
            argNum++
            i++
            continue formatLoop
          }
          break simple
      }
    }
    let r = argNumber(i)
    i = r.i
    afterIndex = r.found
    if (i < end && format[i] === '*') {
      i++
      const w = intFromArg()
      p.wid = w.num
      p.widPresent = w.isInt
      if (!p.widPresent) p.write('%!(BADWIDTH)')
      if (p.wid < 0) {
        p.wid = -p.wid
        p.minus = true
        p.zero = false
      }
      afterIndex = false
    } else {
      const n = parsenum(format, i, end)
      p.wid = n.num
      p.widPresent = n.isnum
      i = n.newi
      if (afterIndex && p.widPresent) goodArgNum = false
    }
    if (i + 1 < end && format[i] === '.') {
      i++
      if (afterIndex) goodArgNum = false
      r = argNumber(i)
      i = r.i
      afterIndex = r.found
      if (i < end && format[i] === '*') {
        i++
        const w = intFromArg()
        p.prec = w.num
        p.precPresent = w.isInt
        if (p.prec < 0) {
          p.prec = 0
          p.precPresent = false
        }
        if (!p.precPresent) p.write('%!(BADPREC)')
        afterIndex = false
      } else {
        const n = parsenum(format, i, end)
        p.prec = n.num
        p.precPresent = n.isnum
        i = n.newi
        if (!p.precPresent) {
          p.prec = 0
          p.precPresent = true
        }
      }
    }
    if (!afterIndex) {
      r = argNumber(i)
      i = r.i
      afterIndex = r.found
    }
    if (i >= end) {
      p.write('%!(NOVERB)')
      break
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!)
    i += verb.length
    if (verb === '%') p.write('%')
    else if (!goodArgNum) p.write('%!' + verb + '(BADINDEX)')
    else if (argNum >= a.length) p.write('%!' + verb + '(MISSING)')
    else {
      p.printVerb(a[argNum], verb)
      argNum++
    }
  }
  if (!reordered && argNum < a.length) {
    p.clearFlags()
    p.write('%!(EXTRA ')
    a.slice(argNum).forEach((arg, i) => {
      if (i > 0) p.write(', ')
      const t = typeName(arg)
      if (t === null) p.write(NIL_ANGLE)
      else {
        p.write(t + '=')
        p.printArg(arg, 'v')
      }
    })
    p.write(')')
  }
  return p.buf
}

/** What `{{.}}` prints for a non-nil value (fmt.Fprint of one operand). */
export function printValue(v: GoValue, maxLength: number): string {
  return sprint([v], maxLength)
}

