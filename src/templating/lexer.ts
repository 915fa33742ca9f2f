// A port of Go's text/template/parse/lex.go (Go 1.19): same tokens, same trim-marker and comment rules.

export const enum T {
  Error, Bool, Char, CharConstant, Comment, Complex, Assign, Declare, EOF, Field, Identifier, LeftDelim, LeftParen,
  Number, Pipe, RawString, RightDelim, RightParen, Space, String, Text, Variable,
  // keywords
  Keyword, Block, Break, Continue, Dot, Define, Else, End, If, Nil, Range, Template, With,
}

export interface Item { typ: T; pos: number; val: string; line: number }

const KEYWORDS: Record<string, T> = {
  '.': T.Dot, block: T.Block, break: T.Break, continue: T.Continue, define: T.Define, else: T.Else, end: T.End,
  if: T.If, range: T.Range, nil: T.Nil, template: T.Template, with: T.With,
}

const LEFT = '{{'
const RIGHT = '}}'
const LEFT_COMMENT = '/*'
const RIGHT_COMMENT = '*/'
const TRIM_MARKER_LEN = 2
const EOF_RUNE = -1

export function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a
}
const LETTER_OR_DIGIT = /^[\p{L}\p{Nd}_]$/u
export function isAlphaNumeric(r: number): boolean {
  if (r < 0) return false
  if (r < 0x80) return r === 0x5f || (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a)
  return LETTER_OR_DIGIT.test(String.fromCodePoint(r))
}
function hasLeftTrimMarker(s: string, at: number): boolean {
  return s.length - at >= 2 && s[at] === '-' && isSpace(s.charCodeAt(at + 1))
}
function hasRightTrimMarker(s: string, at: number): boolean {
  return s.length - at >= 2 && isSpace(s.charCodeAt(at)) && s[at + 1] === '-'
}
function trimRightLength(s: string): number {
  let i = s.length
  while (i > 0 && isSpace(s.charCodeAt(i - 1))) i--
  return s.length - i
}
function trimLeftLength(s: string, from: number): number {
  let i = from
  while (i < s.length && isSpace(s.charCodeAt(i))) i++
  return i - from
}
function countNewlines(s: string, from: number, to: number): number {
  // Only [from, to): an indexOf that runs on to the next newline would rescan the rest of a one-line
  // template for every token (quadratic).
  let n = 0
  for (let i = from; i < to; i++) if (s.charCodeAt(i) === 10) n++
  return n
}

type StateFn = ((l: Lexer) => StateFn) | null

class Lexer {
  pos = 0
  start = 0
  atEOF = false
  parenDepth = 0
  line = 1
  startLine = 1
  readonly items: Item[] = []
  constructor(readonly input: string) {}

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true
      return EOF_RUNE
    }
    const r = this.input.codePointAt(this.pos)!
    this.pos += r > 0xffff ? 2 : 1
    if (r === 0x0a) this.line++
    return r
  }
  peek(): number {
    const r = this.next()
    this.backup()
    return r
  }
  backup(): void {
    if (!this.atEOF && this.pos > 0) {
      const lo = this.input.charCodeAt(this.pos - 1)
      const w = lo >= 0xdc00 && lo <= 0xdfff && this.pos >= 2 && (this.input.charCodeAt(this.pos - 2) & 0xfc00) === 0xd800 ? 2 : 1
      this.pos -= w
      if (lo === 0x0a) this.line--
    }
  }
  emit(typ: T): void {
    this.items.push({ typ, pos: this.start, val: this.input.slice(this.start, this.pos), line: this.startLine })
    this.start = this.pos
    this.startLine = this.line
  }
  ignore(): void {
    this.line += countNewlines(this.input, this.start, this.pos)
    this.start = this.pos
    this.startLine = this.line
  }
  accept(valid: string): boolean {
    const r = this.next()
    if (r >= 0 && valid.includes(String.fromCodePoint(r))) return true
    this.backup()
    return false
  }
  acceptRun(valid: string): void {
    for (;;) {
      const r = this.next()
      if (r < 0 || !valid.includes(String.fromCodePoint(r))) break
    }
    this.backup()
  }
  errorf(message: string): StateFn {
    this.items.push({ typ: T.Error, pos: this.start, val: message, line: this.startLine })
    return null
  }
  atRightDelim(): { delim: boolean; trimSpaces: boolean } {
    if (hasRightTrimMarker(this.input, this.pos) && this.input.startsWith(RIGHT, this.pos + TRIM_MARKER_LEN)) return { delim: true, trimSpaces: true }
    if (this.input.startsWith(RIGHT, this.pos)) return { delim: true, trimSpaces: false }
    return { delim: false, trimSpaces: false }
  }
  atTerminator(): boolean {
    const r = this.peek()
    if (isSpace(r)) return true
    switch (r) {
      case EOF_RUNE: case 0x2e: case 0x2c: case 0x7c: case 0x3a: case 0x29: case 0x28:
        return true
    }
    return this.input.startsWith(RIGHT, this.pos)
  }
}

function describeRune(r: number): string {
  if (r < 0) return 'EOF'
  return `U+${r.toString(16).toUpperCase().padStart(4, '0')} '${String.fromCodePoint(r)}'`
}

function lexText(l: Lexer): StateFn {
  const x = l.input.indexOf(LEFT, l.pos)
  if (x >= 0) {
    l.pos = x
    let trimLength = 0
    if (hasLeftTrimMarker(l.input, l.pos + LEFT.length)) trimLength = trimRightLength(l.input.slice(l.start, l.pos))
    l.pos -= trimLength
    if (l.pos > l.start) {
      l.line += countNewlines(l.input, l.start, l.pos)
      l.emit(T.Text)
    }
    l.pos += trimLength
    l.ignore()
    return lexLeftDelim
  }
  l.pos = l.input.length
  if (l.pos > l.start) {
    l.line += countNewlines(l.input, l.start, l.pos)
    l.emit(T.Text)
  }
  l.emit(T.EOF)
  return null
}

function lexLeftDelim(l: Lexer): StateFn {
  l.pos += LEFT.length
  const trimSpace = hasLeftTrimMarker(l.input, l.pos)
  const afterMarker = trimSpace ? TRIM_MARKER_LEN : 0
  if (l.input.startsWith(LEFT_COMMENT, l.pos + afterMarker)) {
    l.pos += afterMarker
    l.ignore()
    return lexComment
  }
  l.emit(T.LeftDelim)
  l.pos += afterMarker
  l.ignore()
  l.parenDepth = 0
  return lexInsideAction
}

function lexComment(l: Lexer): StateFn {
  l.pos += LEFT_COMMENT.length
  const i = l.input.indexOf(RIGHT_COMMENT, l.pos)
  if (i < 0) return l.errorf('unclosed comment')
  l.pos = i + RIGHT_COMMENT.length
  const { delim, trimSpaces } = l.atRightDelim()
  if (!delim) return l.errorf('comment ends before closing delimiter')
  if (trimSpaces) l.pos += TRIM_MARKER_LEN
  l.pos += RIGHT.length
  if (trimSpaces) l.pos += trimLeftLength(l.input, l.pos)
  l.ignore()
  return lexText
}

function lexRightDelim(l: Lexer): StateFn {
  const trimSpace = hasRightTrimMarker(l.input, l.pos)
  if (trimSpace) {
    l.pos += TRIM_MARKER_LEN
    l.ignore()
  }
  l.pos += RIGHT.length
  l.emit(T.RightDelim)
  if (trimSpace) {
    l.pos += trimLeftLength(l.input, l.pos)
    l.ignore()
  }
  return lexText
}

function lexInsideAction(l: Lexer): StateFn {
  const { delim } = l.atRightDelim()
  if (delim) {
    if (l.parenDepth === 0) return lexRightDelim
    return l.errorf('unclosed left paren')
  }
  const r = l.next()
  if (r === EOF_RUNE) return l.errorf('unclosed action')
  if (isSpace(r)) {
    l.backup()
    return lexSpace
  }
  switch (r) {
    case 0x3d: // =
      l.emit(T.Assign)
      return lexInsideAction
    case 0x3a: // :
      if (l.next() !== 0x3d) return l.errorf('expected :=')
      l.emit(T.Declare)
      return lexInsideAction
    case 0x7c: // |
      l.emit(T.Pipe)
      return lexInsideAction
    case 0x22: return lexQuote
    case 0x60: return lexRawQuote
    case 0x24: return lexVariable
    case 0x27: return lexChar
    case 0x28:
      l.emit(T.LeftParen)
      l.parenDepth++
      return lexInsideAction
    case 0x29:
      l.emit(T.RightParen)
      l.parenDepth--
      if (l.parenDepth < 0) return l.errorf(`unexpected right paren ${describeRune(r)}`)
      return lexInsideAction
  }
  if (r === 0x2e) {
    if (l.pos < l.input.length) {
      const c = l.input.charCodeAt(l.pos)
      if (c < 0x30 || c > 0x39) return lexField
    }
    l.backup()
    return lexNumber
  }
  if (r === 0x2b || r === 0x2d || (r >= 0x30 && r <= 0x39)) {
    l.backup()
    return lexNumber
  }
  if (isAlphaNumeric(r)) {
    l.backup()
    return lexIdentifier
  }
  if (r <= 0x7e && r >= 0x20) {
    l.emit(T.Char)
    return lexInsideAction
  }
  return l.errorf(`unrecognized character in action: ${describeRune(r)}`)
}

function lexSpace(l: Lexer): StateFn {
  let numSpaces = 0
  for (;;) {
    const r = l.peek()
    if (!isSpace(r)) break
    l.next()
    numSpaces++
  }
  if (hasRightTrimMarker(l.input, l.pos - 1) && l.input.startsWith(RIGHT, l.pos - 1 + TRIM_MARKER_LEN)) {
    l.backup()
    if (numSpaces === 1) return lexRightDelim
  }
  l.emit(T.Space)
  return lexInsideAction
}

function lexIdentifier(l: Lexer): StateFn {
  for (;;) {
    const r = l.next()
    if (isAlphaNumeric(r)) continue
    l.backup()
    const word = l.input.slice(l.start, l.pos)
    if (!l.atTerminator()) return l.errorf(`bad character ${describeRune(r)}`)
    const kw = Object.hasOwn(KEYWORDS, word) ? KEYWORDS[word] : undefined
    if (kw !== undefined && kw > T.Keyword) l.emit(kw)
    else if (word[0] === '.') l.emit(T.Field)
    else if (word === 'true' || word === 'false') l.emit(T.Bool)
    else l.emit(T.Identifier)
    return lexInsideAction
  }
}

function lexField(l: Lexer): StateFn {
  return lexFieldOrVariable(l, T.Field)
}

function lexVariable(l: Lexer): StateFn {
  if (l.atTerminator()) {
    l.emit(T.Variable)
    return lexInsideAction
  }
  return lexFieldOrVariable(l, T.Variable)
}

function lexFieldOrVariable(l: Lexer, typ: T): StateFn {
  if (l.atTerminator()) {
    l.emit(typ === T.Variable ? T.Variable : T.Dot)
    return lexInsideAction
  }
  let r: number
  for (;;) {
    r = l.next()
    if (!isAlphaNumeric(r)) {
      l.backup()
      break
    }
  }
  if (!l.atTerminator()) return l.errorf(`bad character ${describeRune(r)}`)
  l.emit(typ)
  return lexInsideAction
}

function lexChar(l: Lexer): StateFn {
  for (;;) {
    let r = l.next()
    if (r === 0x5c) {
      r = l.next()
      if (r !== EOF_RUNE && r !== 0x0a) continue
      return l.errorf('unterminated character constant')
    }
    if (r === EOF_RUNE || r === 0x0a) return l.errorf('unterminated character constant')
    if (r === 0x27) break
  }
  l.emit(T.CharConstant)
  return lexInsideAction
}

function lexNumber(l: Lexer): StateFn {
  if (!scanNumber(l)) return l.errorf(`bad number syntax: ${JSON.stringify(l.input.slice(l.start, l.pos))}`)
  const sign = l.peek()
  if (sign === 0x2b || sign === 0x2d) {
    if (!scanNumber(l) || l.input[l.pos - 1] !== 'i') return l.errorf(`bad number syntax: ${JSON.stringify(l.input.slice(l.start, l.pos))}`)
    l.emit(T.Complex)
  } else {
    l.emit(T.Number)
  }
  return lexInsideAction
}

function scanNumber(l: Lexer): boolean {
  l.accept('+-')
  let digits = '0123456789_'
  if (l.accept('0')) {
    if (l.accept('xX')) digits = '0123456789abcdefABCDEF_'
    else if (l.accept('oO')) digits = '01234567_'
    else if (l.accept('bB')) digits = '01_'
  }
  l.acceptRun(digits)
  if (l.accept('.')) l.acceptRun(digits)
  if (digits.length === 11 && l.accept('eE')) {
    l.accept('+-')
    l.acceptRun('0123456789_')
  }
  if (digits.length === 23 && l.accept('pP')) {
    l.accept('+-')
    l.acceptRun('0123456789_')
  }
  l.accept('i')
  if (isAlphaNumeric(l.peek())) {
    l.next()
    return false
  }
  return true
}

function lexQuote(l: Lexer): StateFn {
  for (;;) {
    let r = l.next()
    if (r === 0x5c) {
      r = l.next()
      if (r !== EOF_RUNE && r !== 0x0a) continue
      return l.errorf('unterminated quoted string')
    }
    if (r === EOF_RUNE || r === 0x0a) return l.errorf('unterminated quoted string')
    if (r === 0x22) break
  }
  l.emit(T.String)
  return lexInsideAction
}

function lexRawQuote(l: Lexer): StateFn {
  for (;;) {
    const r = l.next()
    if (r === EOF_RUNE) return l.errorf('unterminated raw quoted string')
    if (r === 0x60) break
  }
  l.emit(T.RawString)
  return lexInsideAction
}

/** Tokenizes the whole template; an error stops the stream with an Error item. */
export function lex(input: string): Item[] {
  const l = new Lexer(input)
  let state: StateFn = lexText
  while (state !== null) state = state(l)
  return l.items
}
