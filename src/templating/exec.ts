// A port of Go's text/template/exec.go (Go 1.19) over the engine's value model, with the sandbox limits.
import type { ArgNode, BranchNode, CommandNode, IdentifierNode, ListNode, Node, NumberNode, ParsedTree, PipeNode, TemplateNode } from './ast.ts'
import { nodeString } from './ast.ts'
import { FormatLimitError, printValue } from './fmt.ts'
import { FUNCTIONS, FuncError, NO_SYNTAX, type CallContext, type ParamType } from './functions.ts'
import { isTrue, sortedKeys, typeName, type GoValue } from './values.ts'

export interface RenderLimits {
  /** Largest output, in UTF-8 bytes (also the longest string a function may build). */
  maxOutputBytes: number
  /** Total `range` iterations over the whole render. */
  maxRangeIterations: number
  /** Deepest nesting of if/with/range and parentheses, and of the data passed in. */
  maxDepth: number
  /** Wall-clock budget for one render. */
  timeBudgetMs: number
}

/** Raised with the byte offset of the node being executed; index.ts turns it into a TemplateError. */
export class ExecFailure extends Error {
  constructor(readonly pos: number, readonly detail: string) {
    super(detail)
  }
}

const MISSING = Symbol('missing')
type Final = GoValue | typeof MISSING

class BreakSignal {}
class ContinueSignal {}
const BREAK = new BreakSignal()
const CONTINUE = new ContinueSignal()

export interface ActionHook {
  /** Called for each printed action with its value and text; returns what to write instead. */
  (value: GoValue, text: string, syntax: GoValue | typeof NO_SYNTAX): string
}

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8')

export class Executor implements CallContext {
  // `wrapped`: the value is an interface{} element of a slice or map, as Go's range hands it out.
  private vars: { name: string; value: GoValue; wrapped?: boolean }[] = []
  private dotWrapped = false
  private readonly chunks: string[] = []
  private outputBytes = 0
  private pos = 0
  private steps = 0
  private iterations = 0
  private depth = 0
  private readonly deadline: number
  private syntax = new Map<string, GoValue>()
  private defined = new Map<string, ListNode>()
  readonly maxLength: number

  constructor(private readonly limits: RenderLimits, private readonly onAction: ActionHook | null) {
    this.deadline = performance.now() + limits.timeBudgetMs
    this.maxLength = limits.maxOutputBytes
  }

  run(tree: ParsedTree, data: GoValue): string {
    this.vars = [{ name: '$', value: data }]
    this.defined = tree.defined
    try {
      this.walk(data, tree.root)
    } catch (e) {
      if (e instanceof BreakSignal || e instanceof ContinueSignal) this.fail('break or continue outside range')
      if (e instanceof FormatLimitError) this.fail(e.message)
      throw e
    }
    return this.chunks.join('')
  }

  // ---- CallContext ----
  recordSyntax(text: string, value: GoValue): void {
    if (this.onAction !== null) this.syntax.set(text, value)
  }
  syntaxOf(text: string): GoValue | typeof NO_SYNTAX {
    return this.syntax.has(text) ? this.syntax.get(text) : NO_SYNTAX
  }

  // ---- plumbing ----
  private fail(detail: string): never {
    throw new ExecFailure(this.pos, detail)
  }
  private at(pos: number): void {
    this.pos = pos
    if ((++this.steps & 0xff) === 0 && performance.now() > this.deadline) {
      this.fail(`render took longer than ${this.limits.timeBudgetMs} ms`)
    }
  }
  private grow(bytes: number): void {
    this.outputBytes += bytes
    if (this.outputBytes > this.limits.maxOutputBytes) this.fail(`output larger than ${this.limits.maxOutputBytes} bytes`)
  }
  private write(s: string): void {
    if (s.length === 0) return
    this.grow(utf8Length(s))
    this.chunks.push(s)
  }
  private setVar(name: string, value: GoValue): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i].name === name) {
        this.vars[i] = { name, value }
        return
      }
    }
    this.fail(`undefined variable: ${name}`)
  }
  private varValue(name: string): GoValue {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i].name === name) return this.vars[i].value
    this.fail(`undefined variable: ${name}`)
  }
  private isWrappedVar(name: string): boolean {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i].name === name) return this.vars[i].wrapped === true
    return false
  }
  private enter(): void {
    if (++this.depth > this.limits.maxDepth) this.fail(`nesting deeper than ${this.limits.maxDepth} levels`)
  }

  // ---- walking ----
  private walk(dot: GoValue, node: Node): void {
    this.at(node.pos)
    switch (node.kind) {
      case 'action': {
        if (this.onAction !== null) this.syntax = new Map()
        const val = this.evalPipeline(dot, node.pipe)
        if (node.pipe.decl.length === 0) this.printAction(node.pos, node.pipe, val)
        return
      }
      case 'break': throw BREAK
      case 'continue': throw CONTINUE
      case 'if': return this.walkIfOrWith(false, dot, node)
      case 'with': return this.walkIfOrWith(true, dot, node)
      case 'list':
        for (const n of node.nodes) this.walk(dot, n)
        return
      case 'range': return this.walkRange(dot, node)
      case 'text': return this.write(node.text)
      case 'template': return this.walkTemplate(dot, node)
    }
  }

  private walkTemplate(dot: GoValue, node: TemplateNode): void {
    const body = this.defined.get(node.name)
    if (body === undefined) this.fail(`template "${node.name}" not defined`)
    const value = node.pipe === null ? undefined : this.evalPipeline(dot, node.pipe)
    const vars = this.vars
    const wrapped = this.dotWrapped
    // A called template sees only its argument: $ is the new dot, the caller's variables are gone.
    this.vars = [{ name: '$', value }]
    this.dotWrapped = false
    this.enter()
    try {
      this.walk(value, body)
    } finally {
      this.depth--
      this.vars = vars
      this.dotWrapped = wrapped
    }
  }

  private printAction(pos: number, pipe: PipeNode, val: GoValue): void {
    this.at(pos)
    // In a manifest a missing value is a mistake to report, not "<no value>" to deploy.
    if (val === undefined && this.onAction !== null) this.fail(`${nodeString(pipe)} has no value (use default to give one)`)
    let text: string
    try {
      text = val === undefined ? '<no value>' : printValue(val, this.maxLength)
    } catch (e) {
      if (e instanceof FormatLimitError) this.fail(e.message)
      throw e
    }
    if (this.onAction === null) return this.write(text)
    const shown = this.onAction(val, text, this.syntaxOf(text))
    // The manifest will hold the value's text, not the short placeholder written here: the value counts
    // toward the output limit, or a range could repeat a large value far past it.
    this.grow(utf8Length(text) - utf8Length(shown))
    this.write(shown)
  }

  private walkIfOrWith(isWith: boolean, dot: GoValue, node: BranchNode): void {
    const mark = this.vars.length
    this.enter()
    const val = this.evalPipeline(dot, node.pipe)
    if (isTrue(val)) {
      const outerWrapped = this.dotWrapped
      if (isWith) this.dotWrapped = false
      this.walk(isWith ? val : dot, node.list)
      this.dotWrapped = outerWrapped
    } else if (node.elseList !== null) this.walk(dot, node.elseList)
    this.depth--
    this.vars.length = mark
  }

  private walkRange(dot: GoValue, node: BranchNode): void {
    this.at(node.pos)
    const outerMark = this.vars.length
    this.enter()
    const val = this.evalPipeline(dot, node.pipe)
    const mark = this.vars.length
    const declCount = node.pipe.decl.length
    const oneIteration = (index: GoValue, elem: GoValue): boolean => {
      if (++this.iterations > this.limits.maxRangeIterations) this.fail(`more than ${this.limits.maxRangeIterations} range iterations`)
      if (declCount > 0) Object.assign(this.vars[this.vars.length - 1], { value: elem, wrapped: true })
      if (declCount > 1) this.vars[this.vars.length - 2].value = index
      const outerWrapped = this.dotWrapped
      this.dotWrapped = true
      try {
        this.walk(elem, node.list)
      } catch (e) {
        if (e === BREAK) return false
        if (e !== CONTINUE) throw e
      } finally {
        this.dotWrapped = outerWrapped
        this.vars.length = mark
      }
      return true
    }
    let iterated = false
    if (Array.isArray(val)) {
      const items = val
      for (let i = 0; i < items.length; i++) {
        iterated = true
        if (!oneIteration(BigInt(i), items[i])) break
      }
    } else if (val instanceof Map) {
      const m = val
      for (const k of sortedKeys(m)) {
        iterated = true
        if (!oneIteration(k, m.get(k))) break
      }
    } else if (val !== undefined && val !== null) {
      this.at(node.pos)
      // Go prints the value here; we name its type so that an error never echoes a (secret) value.
      this.fail(`range can't iterate over a value of type ${typeName(val)}`)
    }
    if (!iterated && node.elseList !== null) this.walk(dot, node.elseList)
    this.depth--
    this.vars.length = outerMark
  }

  // ---- evaluation ----
  private evalPipeline(dot: GoValue, pipe: PipeNode): GoValue {
    this.at(pipe.pos)
    let value: Final = MISSING
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value)
      // Go re-wraps an interface{} result, so a nil stored in a map or slice becomes "no value".
      if (value === null) value = undefined
    }
    const result = value === MISSING ? undefined : value
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.setVar(v.ident[0], result)
      else this.vars.push({ name: v.ident[0], value: result })
    }
    return result
  }

  private notAFunction(args: ArgNode[], final: Final): void {
    if (args.length > 1 || final !== MISSING) this.fail(`can't give argument to non-function ${nodeString(args[0])}`)
  }

  private evalCommand(dot: GoValue, cmd: CommandNode, final: Final): GoValue {
    const first = cmd.args[0]
    switch (first.kind) {
      case 'field':
        this.at(first.pos)
        return this.evalFieldChain(dot, first.ident, cmd.args, final)
      case 'chain': return this.evalChain(dot, first, cmd.args, final)
      case 'identifier': return this.evalFunction(dot, first, cmd.args, final)
      case 'pipe':
        this.notAFunction(cmd.args, final)
        return this.evalPipeline(dot, first)
      case 'variable': return this.evalVariable(dot, first.ident, first.pos, cmd.args, final)
    }
    this.at(first.pos)
    this.notAFunction(cmd.args, final)
    switch (first.kind) {
      case 'bool': return first.value
      case 'dot': return dot
      case 'nil': this.fail('nil is not a command')
      case 'number': return this.idealConstant(first)
      case 'string': return first.text
    }
  }

  private idealConstant(n: NumberNode): GoValue {
    this.at(n.pos)
    if (n.isFloatSyntax && n.float !== null) return n.float
    if (n.int !== null) return n.int
    this.fail(`${n.text} overflows int`)
  }

  private evalChain(dot: GoValue, chain: Extract<ArgNode, { kind: 'chain' }>, args: ArgNode[], final: Final): GoValue {
    this.at(chain.pos)
    if (chain.node.kind === 'nil') this.fail(`indirection through explicit nil in ${nodeString(chain)}`)
    const receiver = this.evalArg(dot, null, chain.node)
    return this.evalFieldChainFrom(receiver, chain.field, args, final)
  }

  private evalVariable(dot: GoValue, ident: string[], pos: number, args: ArgNode[], final: Final): GoValue {
    this.at(pos)
    const value = this.varValue(ident[0])
    if (ident.length === 1) {
      this.notAFunction(args, final)
      return value
    }
    return this.evalFieldChainFrom(value, ident.slice(1), args, final)
  }

  private evalFieldChain(dot: GoValue, ident: string[], args: ArgNode[], final: Final): GoValue {
    return this.evalFieldChainFrom(dot, ident, args, final)
  }

  private evalFieldChainFrom(receiver: GoValue, ident: string[], args: ArgNode[], final: Final): GoValue {
    for (let i = 0; i < ident.length - 1; i++) receiver = this.evalField(ident[i], [], MISSING, receiver)
    return this.evalField(ident[ident.length - 1], args, final, receiver)
  }

  private evalField(name: string, args: ArgNode[], final: Final, receiver: GoValue): GoValue {
    if (receiver === undefined) return undefined
    if (receiver === null) this.fail(`nil pointer evaluating interface {}.${name}`)
    if (receiver instanceof Map) {
      if (args.length > 1 || final !== MISSING) this.fail(`${name} is not a method but has arguments`)
      // Only the map's own entries: a Map lookup cannot reach a prototype.
      return receiver.has(name) ? receiver.get(name) : undefined
    }
    this.fail(`can't evaluate field ${name} in type ${typeName(receiver)}`)
  }

  private evalFunction(dot: GoValue, node: IdentifierNode, cmdArgs: ArgNode[], final: Final): GoValue {
    this.at(node.pos)
    const name = node.name
    const fn = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined
    if (fn === undefined) this.fail(`"${name}" is not a defined function`)
    const args = cmdArgs.slice(1)
    const numIn = args.length + (final !== MISSING ? 1 : 0)
    const numFixed = fn.variadic !== undefined ? fn.params.length : args.length
    if (fn.variadic !== undefined) {
      if (numIn < numFixed) this.fail(`wrong number of args for ${name}: want at least ${numFixed} got ${args.length}`)
    } else if (numIn !== fn.params.length) {
      this.fail(`wrong number of args for ${name}: want ${fn.params.length} got ${numIn}`)
    }
    if (name === 'and' || name === 'or') {
      let v: GoValue = undefined
      for (const arg of args) {
        v = this.evalArg(dot, 'value', arg)
        if (isTrue(v) === (name === 'or')) return v
      }
      if (final !== MISSING) v = final
      return v
    }
    if (name === 'slice') {
      // Go hands slice its indexes as reflect.Values without unwrapping interfaces, so an index read
      // straight from a map or slice element (interface{}) is refused there, unlike in index.
      for (const a of args.slice(1)) {
        const wrapped = a.kind === 'field' || a.kind === 'chain' || (a.kind === 'dot' && this.dotWrapped) ||
          (a.kind === 'variable' && (a.ident.length > 1 || this.isWrappedVar(a.ident[0])))
        if (wrapped && this.evalArg(dot, 'value', a) !== undefined) {
          this.at(node.pos)
          this.fail('error calling slice: cannot index slice/array with type interface {}')
        }
      }
    }
    const argv: GoValue[] = []
    let i = 0
    for (; i < numFixed && i < args.length; i++) argv.push(this.evalArg(dot, fn.params[i], args[i]))
    if (fn.variadic !== undefined) for (; i < args.length; i++) argv.push(this.evalArg(dot, fn.variadic, args[i]))
    if (final !== MISSING) {
      let t: ParamType = fn.params[fn.params.length - 1]
      if (fn.variadic !== undefined) t = numIn - 1 < numFixed ? fn.params[numIn - 1] : fn.variadic
      argv.push(this.validateType(final, t))
    }
    this.at(node.pos)
    try {
      const result = fn.call(argv, this)
      if (typeof result === 'string' && result.length > this.maxLength) this.fail(`error calling ${name}: result longer than ${this.maxLength} characters`)
      return result
    } catch (e) {
      if (e instanceof FuncError || e instanceof FormatLimitError) this.fail(`error calling ${name}: ${e.message}`)
      throw e
    }
  }

  private validateType(value: GoValue, typ: ParamType | null): GoValue {
    if (typ === null || typ === 'any' || typ === 'value') return value === null ? undefined : value
    if (value === undefined) this.fail(`invalid value; expected ${typ}`)
    if (typ === 'int' && typeof value !== 'bigint') this.fail(`wrong type for value; expected int; got ${typeName(value) ?? 'interface {}'}`)
    if (typ === 'string' && typeof value !== 'string') this.fail(`wrong type for value; expected string; got ${typeName(value) ?? 'interface {}'}`)
    return value
  }

  private evalArg(dot: GoValue, typ: ParamType | null, n: ArgNode): GoValue {
    this.at(n.pos)
    switch (n.kind) {
      case 'dot': return this.validateType(dot, typ)
      case 'nil':
        if (typ === null || typ === 'any' || typ === 'value') return undefined
        this.fail(`cannot assign nil to ${typ}`)
      case 'field': return this.validateType(this.evalFieldChain(dot, n.ident, [n], MISSING), typ)
      case 'variable': return this.validateType(this.evalVariable(dot, n.ident, n.pos, [], MISSING), typ)
      case 'pipe': return this.validateType(this.evalPipeline(dot, n), typ)
      case 'identifier': return this.validateType(this.evalFunction(dot, n, [n], MISSING), typ)
      case 'chain': return this.validateType(this.evalChain(dot, n, [], MISSING), typ)
    }
    switch (typ) {
      case 'int':
        if (n.kind === 'number' && n.int !== null) return n.int
        this.fail(`expected integer; found ${nodeString(n)}`)
      case 'string':
        if (n.kind === 'string') return n.text
        this.fail(`expected string; found ${nodeString(n)}`)
    }
    switch (n.kind) {
      case 'bool': return n.value
      case 'number': return this.idealConstant(n)
      case 'string': return n.text
    }
  }
}
