// Variable interpolation exactly as the Compose Specification defines it: $VAR, ${VAR}, ${VAR:-default},
// ${VAR-default}, ${VAR:?error}, ${VAR?error}, ${VAR:+replacement}, ${VAR+replacement} and $$ for a literal
// $, with interpolation allowed inside defaults, errors and replacements. Any other use of $ is an error,
// as in Compose ("You may need to escape any $ with another $").
import { MAX_COMPOSE_BYTES } from '../../../schemas/import-analysis.ts'
import { ImportError, ImportTooLarge } from './errors.ts'

export type Lookup = (name: string) => string | undefined

export interface Interpolated {
  value: string
  /** Variables whose value was substituted (not those that fell back to a default). */
  used: string[]
}

export interface InterpolateOptions {
  /** Called instead of substituting a variable's value; answers the text to put in its place (or undefined to substitute). */
  substitute?: (name: string, value: string) => string | undefined
  /** Shared by every interpolation of one analysis; without it, the call gets a budget of its own. */
  budget?: ExpansionBudget
}

/**
 * Characters that substitutions may add over one analysis. A real file substitutes a few short values; a
 * hostile one repeats ${BIG} (a 16 KB value a quarter of a million times in a 1 MB file) or doubles a .env
 * value line after line (B=${A}${A}, C=${B}${B}…), so the expanded text, not the file, must be bounded.
 */
export const MAX_EXPANSION_CHARS = 2 * MAX_COMPOSE_BYTES

export class ExpansionBudget {
  private used = 0
  constructor(readonly limit = MAX_EXPANSION_CHARS) {}
  charge(chars: number, where: string): void {
    this.used += chars
    if (this.used > this.limit) throw new ImportTooLarge(`interpolation would substitute more than ${this.limit} characters (the limit for one analysis), reached at ${where}; a variable's value is repeated too often`)
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/
// The longest nesting of ${…} inside defaults: deeper input is refused instead of recursing without bound.
const MAX_NESTING = 20

class Parser {
  readonly used: string[] = []
  private readonly budget: ExpansionBudget
  constructor(private readonly s: string, private readonly lookup: Lookup, private readonly where: string, private readonly options: InterpolateOptions) {
    this.budget = options.budget ?? new ExpansionBudget()
  }

  fail(detail: string): never {
    throw new ImportError(`invalid interpolation format in ${this.where}: ${detail}; write $$ for a literal $`)
  }

  /** Parses from i until the end (depth 0) or the closing brace of the current ${…}; answers the text and where it stopped. */
  text(i: number, depth: number, live = true): { out: string; end: number } {
    let out = ''
    const s = this.s
    while (i < s.length) {
      const c = s[i]
      if (depth > 0 && c === '}') return { out, end: i }
      if (c !== '$') { out += c; i++; continue }
      const next = s[i + 1]
      if (next === '$') { out += '$'; i += 2; continue }
      if (next === '{') {
        const r = this.braced(i + 2, depth + 1, live)
        out += r.out
        i = r.end + 1
        continue
      }
      const m = NAME.exec(s.slice(i + 1, i + 1 + 256))
      if (!m) this.fail(next === undefined ? 'a $ at the end' : 'a $ not followed by a variable name')
      out += (live ? this.value(m[0]) : undefined) ?? ''
      i += 1 + m[0].length
    }
    if (depth > 0) this.fail('an unclosed ${')
    return { out, end: i }
  }

  value(name: string): string | undefined {
    const v = this.lookup(name)
    if (v === undefined) return undefined
    this.used.push(name)
    const out = this.options.substitute?.(name, v) ?? v
    this.budget.charge(out.length, this.where)
    return out
  }

  braced(i: number, depth: number, live: boolean): { out: string; end: number } {
    if (depth > MAX_NESTING) this.fail(`more than ${MAX_NESTING} nested \${…}`)
    const s = this.s
    const m = NAME.exec(s.slice(i, i + 256))
    if (!m) this.fail('${ not followed by a variable name')
    const name = m[0]
    let j = i + name.length
    if (s[j] === '}') return { out: (live ? this.value(name) : undefined) ?? '', end: j }
    let op = ''
    if (s[j] === ':' && '-?+'.includes(s[j + 1] ?? '')) { op = s.slice(j, j + 2); j += 2 }
    else if ('-?+'.includes(s[j] ?? '')) { op = s[j]; j += 1 }
    else this.fail(`unexpected character after \${${name}`)
    const raw = this.lookup(name)
    const set = raw !== undefined
    const nonEmpty = set && raw !== ''
    // The operand only counts (its variables, its own ${X:?}) when it is used, as in Compose; it is always
    // parsed, so a malformed one is reported either way.
    const needed = live && (op === ':-' ? !nonEmpty : op === '-' ? !set : op === ':+' ? nonEmpty : op === '+' ? set : !(op === ':?' ? nonEmpty : set))
    const operand = this.text(j, depth, needed)
    if (!live) return { out: '', end: operand.end }
    let out: string
    switch (op) {
      case ':-': out = nonEmpty ? this.value(name)! : operand.out; break
      case '-': out = set ? this.value(name)! : operand.out; break
      case ':?': if (!nonEmpty) throw new ImportError(`required variable ${name} is missing a value${operand.out ? `: ${operand.out}` : ''} (${this.where})`); out = this.value(name)!; break
      case '?': if (!set) throw new ImportError(`required variable ${name} is missing a value${operand.out ? `: ${operand.out}` : ''} (${this.where})`); out = this.value(name)!; break
      case ':+': out = nonEmpty ? operand.out : ''; break
      default: out = set ? operand.out : '' // '+'
    }
    return { out, end: operand.end }
  }
}

/** `where` names the place in the file for messages (never the value). */
export function interpolate(s: string, lookup: Lookup, where: string, options: InterpolateOptions = {}): Interpolated {
  if (!s.includes('$')) return { value: s, used: [] }
  const p = new Parser(s, lookup, where, options)
  return { value: p.text(0, 0).out, used: p.used }
}
