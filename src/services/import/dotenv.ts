// `.env` and env_file: content as Compose reads it: KEY=VAL lines, `export ` prefixes, # comments, single
// quotes literal, double quotes with escapes, unquoted and double-quoted values interpolated from what is
// already known (earlier lines, then the lookup).
import { ImportError } from './errors.ts'
import { interpolate, type ExpansionBudget, type Lookup } from './interpolate.ts'

const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '\\': '\\', '"': '"', $: '$$' }

/** `tainted` collects the values built from sensitive variables (see names.ts), so they are kept secret too. */
export function parseDotEnv(content: string, lookup: Lookup, where: string, tainted?: (used: string[], value: string) => void, budget?: ExpansionBudget): Map<string, string> {
  const out = new Map<string, string>()
  const known: Lookup = (name) => out.get(name) ?? lookup(name)
  const lines = content.replace(/\r\n?/g, '\n').split('\n')
  for (let n = 0; n < lines.length; n++) {
    let line = lines[n].trim()
    if (line === '' || line.startsWith('#')) continue
    if (line.startsWith('export ')) line = line.slice(7).trimStart()
    const eq = line.indexOf('=')
    const key = (eq < 0 ? line : line.slice(0, eq)).trim()
    if (!KEY.test(key)) throw new ImportError(`${where} line ${n + 1}: not a KEY=value line`)
    if (eq < 0) continue // a bare name sets nothing
    let rest = line.slice(eq + 1).trimStart()
    let value: string
    if (rest.startsWith("'") || rest.startsWith('"')) {
      const quote = rest[0]
      // A quoted value may span lines.
      let body = rest.slice(1)
      let close = findClose(body, quote)
      while (close < 0 && n + 1 < lines.length) { n++; body += '\n' + lines[n]; close = findClose(body, quote) }
      if (close < 0) throw new ImportError(`${where} line ${n + 1}: unterminated quoted value of ${key}`)
      const inner = body.slice(0, close)
      if (quote === "'") value = inner
      else {
        const r = interpolate(inner.replace(/\\(.)/g, (m, c: string) => ESCAPES[c] ?? m), known, `${where} (${key})`, { budget })
        tainted?.(r.used, r.value)
        value = r.value
      }
    } else {
      const hash = rest.search(/\s#/)
      if (hash >= 0) rest = rest.slice(0, hash)
      const r = interpolate(rest.trimEnd(), known, `${where} (${key})`, { budget })
      tainted?.(r.used, r.value)
      value = r.value
    }
    out.set(key, value)
  }
  return out
}

function findClose(s: string, quote: string): number {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && quote === '"') { i++; continue }
    if (s[i] === quote) return i
  }
  return -1
}
