// A port of Go's text/template/parse/parse.go (Go 1.19) without define/template/block.
import type { ActionNode, ArgNode, CommandNode, ListNode, Node, NumberNode, ParsedTree, PipeNode, VariableNode } from './ast.ts'
import { lex, T, type Item } from './lexer.ts'
import { TemplateError, lineColumn } from './errors.ts'

class ParseFailure extends Error {
  constructor(readonly pos: number, readonly detail: string) {
    super(detail)
  }
}

type Terminal = { kind: 'end'; pos: number } | { kind: 'else'; pos: number }

export interface ParseOptions {
  name: string
  functions: ReadonlySet<string>
  maxDepth: number
}

function describe(item: Item): string {
  switch (item.typ) {
    case T.EOF: return 'EOF'
    case T.Error: return item.val
  }
  if (item.typ > T.Keyword) return `<${item.val}>`
  if ([...item.val].length > 10) return goQuote([...item.val].slice(0, 10).join('')) + '...'
  return goQuote(item.val)
}

function goQuote(s: string): string {
  return JSON.stringify(s)
}

class Parser {
  private readonly items: Item[]
  private index = 0
  private vars: string[] = ['$']
  private rangeDepth = 0
  private depth = 0
  private lastPos = 0
  readonly defined = new Map<string, ListNode>()

  constructor(private readonly source: string, private readonly options: ParseOptions) {
    this.items = lex(source)
  }

  private nextItem(): Item {
    const item = this.items[Math.min(this.index, this.items.length - 1)]
    this.index++
    this.lastPos = item.pos
    return item
  }
  private next(): Item { return this.nextItem() }
  private backup(n = 1): void { this.index -= n }
  private peek(): Item { return this.items[Math.min(this.index, this.items.length - 1)] }
  private nextNonSpace(): Item {
    let token: Item
    do token = this.next()
    while (token.typ === T.Space)
    return token
  }
  private peekNonSpace(): Item {
    const save = this.index
    const token = this.nextNonSpace()
    this.index = save
    return token
  }

  private fail(detail: string, pos = this.lastPos): never {
    throw new ParseFailure(pos, detail)
  }
  private unexpected(token: Item, context: string): never {
    if (token.typ === T.Error) this.fail(token.val, token.pos)
    this.fail(`unexpected ${describe(token)} in ${context}`, token.pos)
  }
  private expect(typ: T, context: string): Item {
    const token = this.nextNonSpace()
    if (token.typ !== typ) this.unexpected(token, context)
    return token
  }
  private enter(pos: number): void {
    if (++this.depth > this.options.maxDepth) this.fail(`nesting deeper than ${this.options.maxDepth} levels`, pos)
  }
  private leave(): void { this.depth-- }

  parse(): ListNode {
    const root: ListNode = { kind: 'list', pos: this.peek().pos, nodes: [] }
    while (this.peek().typ !== T.EOF) {
      if (this.peek().typ === T.Error) this.unexpected(this.peek(), 'input')
      if (this.peek().typ === T.LeftDelim) {
        const save = this.index
        this.next()
        if (this.nextNonSpace().typ === T.Define) {
          this.definition()
          continue
        }
        this.index = save
      }
      const n = this.textOrAction()
      if ('kind' in n && (n.kind === 'end' || n.kind === 'else')) this.fail(`unexpected {{${n.kind}}}`, n.pos)
      root.nodes.push(n as Node)
    }
    return root
  }

  /** Go's add(): a name may be defined twice only when one of the bodies is empty. */
  private addDefinition(name: string, body: ListNode, pos: number): void {
    const existing = this.defined.get(name)
    if (existing === undefined || isEmptyTree(existing)) this.defined.set(name, body)
    else if (!isEmptyTree(body)) this.fail(`template: multiple definition of template "${name}"`, pos)
  }

  /** A define or block body is a tree of its own: no outer variables, no enclosing range. */
  private subtree<R>(body: () => R): R {
    const vars = this.vars
    const rangeDepth = this.rangeDepth
    this.vars = ['$']
    this.rangeDepth = 0
    try {
      return body()
    } finally {
      this.vars = vars
      this.rangeDepth = rangeDepth
    }
  }

  private definition(): void {
    const nameToken = this.nextNonSpace()
    if (nameToken.typ !== T.String && nameToken.typ !== T.RawString) this.unexpected(nameToken, 'define clause')
    const name = this.unquote(nameToken)
    this.expect(T.RightDelim, 'define clause')
    this.enter(nameToken.pos)
    const { list, next } = this.subtree(() => this.itemList())
    this.leave()
    if (next.kind !== 'end') this.fail(`unexpected {{${next.kind}}} in define clause`, next.pos)
    this.addDefinition(name, list, nameToken.pos)
  }

  private templateName(token: Item, context: string): string {
    if (token.typ !== T.String && token.typ !== T.RawString) this.unexpected(token, context)
    return this.unquote(token)
  }

  private templateControl(): Node {
    const token = this.nextNonSpace()
    const name = this.templateName(token, 'template clause')
    let pipe: PipeNode | null = null
    if (this.nextNonSpace().typ !== T.RightDelim) {
      this.backup()
      pipe = this.pipeline('template clause', T.RightDelim)
    }
    return { kind: 'template', pos: token.pos, name, pipe }
  }

  private blockControl(): Node {
    const token = this.nextNonSpace()
    const name = this.templateName(token, 'block clause')
    const pipe = this.pipeline('block clause', T.RightDelim)
    this.enter(token.pos)
    const { list, next } = this.subtree(() => this.itemList())
    this.leave()
    if (next.kind !== 'end') this.fail(`unexpected {{${next.kind}}} in block clause`, next.pos)
    this.addDefinition(name, list, token.pos)
    return { kind: 'template', pos: token.pos, name, pipe }
  }

  private itemList(): { list: ListNode; next: Terminal } {
    const list: ListNode = { kind: 'list', pos: this.peekNonSpace().pos, nodes: [] }
    while (this.peekNonSpace().typ !== T.EOF) {
      const n = this.textOrAction()
      if (n.kind === 'end' || n.kind === 'else') return { list, next: n as Terminal }
      list.nodes.push(n as Node)
    }
    this.fail('unexpected EOF', this.peek().pos)
  }

  private textOrAction(): Node | Terminal {
    const token = this.nextNonSpace()
    switch (token.typ) {
      case T.Text: return { kind: 'text', pos: token.pos, text: token.val }
      case T.LeftDelim: return this.action()
      default: this.unexpected(token, 'input')
    }
  }

  private action(): Node | Terminal {
    const token = this.nextNonSpace()
    switch (token.typ) {
      case T.Block: return this.blockControl()
      case T.Template: return this.templateControl()
      case T.Break: return this.loopControl('break', token)
      case T.Continue: return this.loopControl('continue', token)
      case T.Else: return this.elseControl(token)
      case T.End: return { kind: 'end', pos: this.expect(T.RightDelim, 'end').pos }
      case T.If: return this.control('if', token)
      case T.Range: return this.control('range', token)
      case T.With: return this.control('with', token)
    }
    this.backup()
    const pos = this.peek().pos
    const node: ActionNode = { kind: 'action', pos, pipe: this.pipeline('command', T.RightDelim) }
    return node
  }

  private loopControl(kind: 'break' | 'continue', token: Item): Node {
    const t = this.nextNonSpace()
    if (t.typ !== T.RightDelim) this.unexpected(t, `{{${kind}}}`)
    if (this.rangeDepth === 0) this.fail(`{{${kind}}} outside {{range}}`, token.pos)
    return { kind, pos: token.pos }
  }

  private elseControl(token: Item): Terminal {
    const peek = this.peekNonSpace()
    if (peek.typ === T.If) return { kind: 'else', pos: peek.pos }
    this.expect(T.RightDelim, 'else')
    return { kind: 'else', pos: token.pos }
  }

  private control(context: 'if' | 'range' | 'with', token: Item): Node {
    this.enter(token.pos)
    const varsMark = this.vars.length
    const pipe = this.pipeline(context, T.RightDelim)
    if (context === 'range') this.rangeDepth++
    const body = this.itemList()
    if (context === 'range') this.rangeDepth--
    let elseList: ListNode | null = null
    if (body.next.kind === 'else') {
      if (context === 'if' && this.peekNonSpace().typ === T.If) {
        const ifToken = this.nextNonSpace()
        elseList = { kind: 'list', pos: body.next.pos, nodes: [this.control('if', ifToken)] }
      } else {
        const rest = this.itemList()
        if (rest.next.kind !== 'end') this.fail('expected end; found {{else}}', rest.next.pos)
        elseList = rest.list
      }
    }
    this.vars.length = varsMark
    this.leave()
    return { kind: context, pos: pipe.pos, pipe, list: body.list, elseList }
  }

  private pipeline(context: string, end: T): PipeNode {
    const token = this.peekNonSpace()
    const pipe: PipeNode = { kind: 'pipe', pos: token.pos, isAssign: false, decl: [], cmds: [] }
    decls: for (;;) {
      const v = this.peekNonSpace()
      if (v.typ !== T.Variable) break
      this.nextNonSpace()
      const next = this.peekNonSpace()
      if (next.typ === T.Assign || next.typ === T.Declare) {
        pipe.isAssign = next.typ === T.Assign
        this.nextNonSpace()
        pipe.decl.push({ kind: 'variable', pos: v.pos, ident: [v.val] })
        this.vars.push(v.val)
      } else if (next.typ === T.Char && next.val === ',') {
        this.nextNonSpace()
        pipe.decl.push({ kind: 'variable', pos: v.pos, ident: [v.val] })
        this.vars.push(v.val)
        if (context === 'range' && pipe.decl.length < 2) {
          const p = this.peekNonSpace().typ
          if (p === T.Variable || p === T.RightDelim || p === T.RightParen) continue decls
          this.fail('range can only initialize variables')
        }
        this.fail(`too many declarations in ${context}`)
      } else {
        // Not a declaration: put the variable (and the space after it) back.
        this.index = this.items.indexOf(v)
      }
      break
    }
    for (;;) {
      const t = this.nextNonSpace()
      if (t.typ === end) {
        this.checkPipeline(pipe, context)
        return pipe
      }
      switch (t.typ) {
        case T.Bool: case T.CharConstant: case T.Complex: case T.Dot: case T.Field: case T.Identifier:
        case T.Number: case T.Nil: case T.RawString: case T.String: case T.Variable: case T.LeftParen:
          this.backup()
          pipe.cmds.push(this.command())
          break
        default:
          this.unexpected(t, context)
      }
    }
  }

  private checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.fail(`missing value for ${context}`)
    pipe.cmds.slice(1).forEach((c, i) => {
      const k = c.args[0].kind
      if (k === 'bool' || k === 'dot' || k === 'nil' || k === 'number' || k === 'string') {
        this.fail(`non executable command in pipeline stage ${i + 2}`, c.pos)
      }
    })
  }

  private command(): CommandNode {
    const cmd: CommandNode = { kind: 'command', pos: this.peekNonSpace().pos, args: [] }
    for (;;) {
      this.peekNonSpace()
      const operand = this.operand()
      if (operand !== null) cmd.args.push(operand)
      const token = this.next()
      if (token.typ === T.Space) continue
      if (token.typ === T.RightDelim || token.typ === T.RightParen) this.backup()
      else if (token.typ !== T.Pipe) this.unexpected(token, 'operand')
      break
    }
    if (cmd.args.length === 0) this.fail('empty command')
    return cmd
  }

  private operand(): ArgNode | null {
    let node = this.term()
    if (node === null) return null
    if (this.peek().typ === T.Field) {
      const pos = this.peek().pos
      const fields: string[] = []
      while (this.peek().typ === T.Field) fields.push(this.next().val.slice(1))
      switch (node.kind) {
        case 'field': node = { kind: 'field', pos, ident: [...node.ident, ...fields] }; break
        case 'variable': node = { kind: 'variable', pos, ident: [...node.ident, ...fields] }; break
        case 'bool': case 'string': case 'number': case 'nil': case 'dot':
          this.fail(`unexpected . after term "${node.kind === 'string' ? node.quoted : node.kind === 'number' ? node.text : node.kind === 'bool' ? String(node.value) : node.kind === 'nil' ? 'nil' : '.'}"`)
        default: node = { kind: 'chain', pos, node, field: fields }
      }
    }
    return node
  }

  private term(): ArgNode | null {
    const token = this.nextNonSpace()
    switch (token.typ) {
      case T.Identifier:
        if (!this.options.functions.has(token.val)) this.fail(`function "${token.val}" not defined`, token.pos)
        return { kind: 'identifier', pos: token.pos, name: token.val }
      case T.Dot: return { kind: 'dot', pos: token.pos }
      case T.Nil: return { kind: 'nil', pos: token.pos }
      case T.Variable: return this.useVar(token)
      case T.Field: return { kind: 'field', pos: token.pos, ident: [token.val.slice(1)] }
      case T.Bool: return { kind: 'bool', pos: token.pos, value: token.val === 'true' }
      case T.CharConstant: case T.Complex: case T.Number: return this.number(token)
      case T.LeftParen: {
        this.enter(token.pos)
        const pipe = this.pipeline('parenthesized pipeline', T.RightParen)
        this.leave()
        return pipe
      }
      case T.String: case T.RawString:
        return { kind: 'string', pos: token.pos, quoted: token.val, text: this.unquote(token) }
    }
    this.backup()
    return null
  }

  private useVar(token: Item): VariableNode {
    const ident = token.val.split('.')
    if (!this.vars.includes(ident[0])) this.fail(`undefined variable "${ident[0]}"`, token.pos)
    return { kind: 'variable', pos: token.pos, ident }
  }

  private unquote(token: Item): string {
    const s = token.val
    if (token.typ === T.RawString) return s.slice(1, -1).replaceAll('\r', '')
    const body = s.slice(1, -1)
    let out = ''
    for (let i = 0; i < body.length;) {
      if (body[i] === '\\') {
        const r = unquoteEscape(body, i, '"')
        if (r === null) this.fail('invalid syntax', token.pos)
        out += r.value
        i = r.next
      } else {
        out += body[i]
        i++
      }
    }
    return out
  }

  private number(token: Item): NumberNode {
    const text = token.val
    const base: NumberNode = { kind: 'number', pos: token.pos, text, int: null, float: null, isFloatSyntax: false }
    if (token.typ === T.CharConstant) {
      const body = text.slice(1, -1)
      let cp: number | null = null
      if (body.startsWith('\\')) {
        const r = unquoteEscape(body, 0, "'")
        if (r !== null && r.next === body.length) cp = r.value.codePointAt(0)!
      } else if (body.length > 0 && [...body].length === 1) {
        cp = body.codePointAt(0)!
      }
      if (cp === null) this.fail(`malformed character constant: ${text}`, token.pos)
      return { ...base, int: BigInt(cp), float: cp }
    }
    if (token.typ === T.Complex || text.endsWith('i')) this.fail(`complex numbers are not supported: ${text}`, token.pos)
    if (/^[+-]?0[xX][^pP.]*[pP.]/.test(text)) this.fail(`hexadecimal floating-point numbers are not supported: ${text}`, token.pos)
    const int = parseGoInt(text)
    if (int !== null) {
      if (int > 0x7fffffffffffffffn || int < -0x8000000000000000n) {
        this.fail(`${text} overflows int`, token.pos)
      }
      return { ...base, int, float: Number(int), isFloatSyntax: /[.eEpP]/.test(text) && !/^[+-]?0[xX]/.test(text) }
    }
    const f = parseGoFloat(text)
    if (f === null) this.fail(`illegal number syntax: "${text}"`, token.pos)
    if (!/[.eEpP]/.test(text)) this.fail(`integer overflow: "${text}"`, token.pos)
    const asInt = Number.isInteger(f) && Math.abs(f) < 2 ** 63 ? BigInt(f) : null
    return { ...base, int: asInt, float: f, isFloatSyntax: true }
  }
}

/** Go's strconv.UnquoteChar for one backslash escape at body[i]. */
export function unquoteEscape(body: string, i: number, quote: string): { value: string; next: number } | null {
  const c = body[i + 1]
  if (c === undefined) return null
  const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' }
  if (Object.hasOwn(simple, c)) return { value: simple[c], next: i + 2 }
  if (c === "'" || c === '"') return c === quote ? { value: c, next: i + 2 } : null
  const hexLen = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0
  if (hexLen > 0) {
    const hex = body.slice(i + 2, i + 2 + hexLen)
    if (hex.length !== hexLen || !/^[0-9a-fA-F]+$/.test(hex)) return null
    const v = parseInt(hex, 16)
    if (c === 'x') return { value: v < 0x80 ? String.fromCharCode(v) : '\ufffd', next: i + 4 }
    if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return null
    return { value: String.fromCodePoint(v), next: i + 2 + hexLen }
  }
  if (c >= '0' && c <= '7') {
    const oct = body.slice(i + 1, i + 4)
    if (!/^[0-7]{3}$/.test(oct)) return null
    const v = parseInt(oct, 8)
    if (v > 255) return null
    return { value: v < 0x80 ? String.fromCharCode(v) : '\ufffd', next: i + 4 }
  }
  return null
}

function underscoreOK(s: string): boolean {
  // Go's strconv.underscoreOK: '_' only between digits or between a base prefix and a digit.
  let saw = '^'
  let i = 0
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1)
  let hex = false
  if (s.length >= 2 && s[0] === '0' && /[bBoOxX]/.test(s[1])) {
    i = 2
    saw = '0'
    hex = s[1] === 'x' || s[1] === 'X'
  }
  for (; i < s.length; i++) {
    const ch = s[i]
    if ((ch >= '0' && ch <= '9') || (hex && /[a-fA-F]/.test(ch))) {
      saw = '0'
      continue
    }
    if (ch === '_') {
      if (saw !== '0') return false
      saw = '_'
      continue
    }
    if (saw === '_') return false
    saw = '!'
  }
  return saw !== '_'
}

/** strconv.ParseInt(text, 0, 64) without the range check (the caller reports overflow). */
export function parseGoInt(text: string): bigint | null {
  let s = text
  let neg = false
  if (s.startsWith('+') || s.startsWith('-')) {
    neg = s[0] === '-'
    s = s.slice(1)
  }
  if (s === '') return null
  let base = 10
  let digits = s
  if (s.length >= 2 && s[0] === '0') {
    const p = s[1].toLowerCase()
    if (p === 'x') { base = 16; digits = s.slice(2) }
    else if (p === 'o') { base = 8; digits = s.slice(2) }
    else if (p === 'b') { base = 2; digits = s.slice(2) }
    else { base = 8; digits = s.slice(1) }
  }
  if (s.includes('_') && !underscoreOK(s)) return null
  digits = digits.replaceAll('_', '')
  if (digits === '') return null
  const valid = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/
  if (!valid.test(digits)) return null
  let v = 0n
  const b = BigInt(base)
  for (const d of digits) v = v * b + BigInt(parseInt(d, base))
  return neg ? -v : v
}

/** strconv.ParseFloat(text, 64) for decimal literals (hexadecimal floats are not supported). */
export function parseGoFloat(text: string): number | null {
  if (text.includes('_') && !underscoreOK(text)) return null
  const s = text.replaceAll('_', '')
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null
  const f = Number(s)
  if (!Number.isFinite(f)) return null
  return f
}

function isEmptyTree(n: Node): boolean {
  if (n.kind === 'list') return n.nodes.every(isEmptyTree)
  if (n.kind === 'text') return n.text.trim().length === 0 || /^[ \t\r\n\v\f\u0085\u00a0]*$/.test(n.text)
  return false
}

export function parse(source: string, options: ParseOptions): ParsedTree {
  try {
    const parser = new Parser(source, options)
    const root = parser.parse()
    return { root, defined: parser.defined }
  } catch (e) {
    if (e instanceof ParseFailure) {
      const { line, column } = lineColumn(source, e.pos)
      throw new TemplateError(options.name, line, column, e.detail)
    }
    throw e
  }
}
