// Go text/template, interpreted (no eval): see README.md in this folder for the syntax, functions,
// limits and the known differences from Go.
import type { ArgNode, Node, ParsedTree, PipeNode } from './ast.ts'
import { TemplateError, ManifestTemplateError, lineColumn } from './errors.ts'
import { ExecFailure, Executor, type ActionHook, type RenderLimits } from './exec.ts'
import { FUNCTION_NAMES } from './functions.ts'
import { parse } from './parser.ts'
import { DataError, fromJS } from './values.ts'
import { renderManifest } from './manifest.ts'

export { TemplateError, ManifestTemplateError }
export type { RenderLimits }

export const DEFAULT_LIMITS: RenderLimits = Object.freeze({
  maxOutputBytes: 1024 * 1024,
  maxRangeIterations: 10_000,
  maxDepth: 50,
  timeBudgetMs: 500,
})

export interface Template {
  /** Top-level names the template reads from its data: `.x` and `.x.y` give "x" (also inside with/range
   *  when the dot is still the root, and `$.x`). Used by plugin registration to refuse unknown fields. */
  readonly references: ReadonlySet<string>
  /** Go text/template semantics, byte for byte (missingkey=default: `<no value>` like Go). */
  execute(data: unknown, limits?: Partial<RenderLimits>): string
}

/** A parsed template; `source` and `root` are for this module's manifest renderer. */
export class ParsedTemplate implements Template {
  readonly references: ReadonlySet<string>
  constructor(readonly name: string, readonly source: string, readonly tree: ParsedTree) {
    this.references = collectReferences(tree)
  }

  execute(data: unknown, limits?: Partial<RenderLimits>): string {
    return this.run(data, limits, null)
  }

  /** Runs the template; `onAction` (manifest mode) may replace what each printed action writes. */
  run(data: unknown, limits: Partial<RenderLimits> | undefined, onAction: ActionHook | null): string {
    const effective = resolveLimits(limits)
    let value
    try {
      value = fromJS(data, effective.maxDepth)
    } catch (e) {
      if (e instanceof DataError) throw new TemplateError(this.name, 1, 1, e.message)
      throw e
    }
    try {
      return new Executor(effective, onAction).run(this.tree, value)
    } catch (e) {
      if (e instanceof ExecFailure) {
        const { line, column } = lineColumn(this.source, e.pos)
        throw new TemplateError(this.name, line, column, e.detail)
      }
      if (e instanceof RangeError) {
        // A JS stack overflow despite the depth limits: report it as a template failure, not a crash.
        throw new TemplateError(this.name, 1, 1, 'template too complex to execute')
      }
      throw e
    }
  }
}

function resolveLimits(limits: Partial<RenderLimits> | undefined): RenderLimits {
  const out = { ...DEFAULT_LIMITS }
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof RenderLimits)[]) {
    const v = limits?.[key]
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[key] = v
  }
  return out
}

/** The longest source parseTemplate takes (4× a plugin's MAX_TEMPLATE_LENGTH), so parse time is bounded
 * even for a caller that does not cap it first. */
export const MAX_SOURCE_LENGTH = 256 * 1024

export function parseTemplate(source: string, options?: { name?: string }): Template {
  const name = options?.name ?? 'template'
  if (typeof source !== 'string') throw new TemplateError(name, 1, 1, 'template source must be a string')
  if (source.length > MAX_SOURCE_LENGTH) throw new TemplateError(name, 1, 1, `template longer than ${MAX_SOURCE_LENGTH} characters`)
  try {
    return new ParsedTemplate(name, source, parse(source, { name, functions: FUNCTION_NAMES, maxDepth: DEFAULT_LIMITS.maxDepth }))
  } catch (e) {
    if (e instanceof RangeError) throw new TemplateError(name, 1, 1, 'template too complex to parse')
    throw e
  }
}

/** Renders a manifest template so that no inserted value can change the YAML structure (a value
 *  "a\nkind: Secret" stays one string), parses the output and returns the documents (non-empty ones).
 *  Throws TemplateError (parse/exec, with line/column) or ManifestTemplateError (output is not YAML, or a
 *  document lacks apiVersion/kind/metadata.name). */
export function renderManifestTemplate(template: Template, data: Record<string, unknown>, limits?: Partial<RenderLimits>): Record<string, unknown>[] {
  if (!(template instanceof ParsedTemplate)) throw new TypeError('renderManifestTemplate needs a template from parseTemplate')
  return renderManifest(template, data, resolveLimits(limits))
}

// ---- references ----

function collectReferences(tree: ParsedTree): ReadonlySet<string> {
  const refs = new Set<string>()
  const arg = (n: ArgNode, dotIsRoot: boolean): void => {
    switch (n.kind) {
      case 'field': if (dotIsRoot) refs.add(n.ident[0]); return
      case 'variable': if (n.ident[0] === '$' && n.ident.length > 1) refs.add(n.ident[1]); return
      case 'chain': return arg(n.node, dotIsRoot)
      case 'pipe': return pipe(n, dotIsRoot)
    }
  }
  const pipe = (p: PipeNode, dotIsRoot: boolean): void => {
    for (const c of p.cmds) for (const a of c.args) arg(a, dotIsRoot)
  }
  const walk = (n: Node, dotIsRoot: boolean): void => {
    switch (n.kind) {
      case 'list': for (const x of n.nodes) walk(x, dotIsRoot); return
      case 'action': return pipe(n.pipe, dotIsRoot)
      case 'if':
        pipe(n.pipe, dotIsRoot)
        walk(n.list, dotIsRoot)
        if (n.elseList) walk(n.elseList, dotIsRoot)
        return
      case 'with': case 'range':
        pipe(n.pipe, dotIsRoot)
        walk(n.list, false)
        if (n.elseList) walk(n.elseList, dotIsRoot)
        return
      case 'template':
        if (n.pipe) pipe(n.pipe, dotIsRoot)
        return
    }
  }
  walk(tree.root, true)
  // A defined template's dot is whatever a caller passes; counting its fields as top-level is the
  // cautious reading (a plugin template passes `.`).
  for (const body of tree.defined.values()) walk(body, true)
  return refs
}
