// Run-time secret and environment values reach the cluster and nothing else: every text a run keeps
// (messages, logs, errors, dry-run diffs) passes through a redactor built from the request's values.
const MASK = '[redacted]'
/** Values this short are masked only as whole words: masking every "ab" inside other words would garble logs and still hide nothing. */
const WHOLE_WORD_BELOW = 4

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')

/** Every form a value can take in a cluster's reply: as is, base64 (Secret data), JSON-escaped. */
function forms(value: string): string[] {
  const out = new Set([value, Buffer.from(value).toString('base64'), JSON.stringify(value).slice(1, -1)])
  // A base64 encoding embedded in longer data loses its padding.
  out.add(Buffer.from(value).toString('base64').replace(/=+$/, ''))
  return [...out].filter((f) => f.length > 0)
}

export type Redact = (text: string) => string

export function redactor(values: Iterable<string>): Redact {
  const long = new Set<string>()
  const short = new Set<string>()
  for (const value of values) {
    if (typeof value !== 'string' || value === '') continue
    for (const f of forms(value)) (f.length < WHOLE_WORD_BELOW ? short : long).add(f)
  }
  if (!long.size && !short.size) return (text) => text
  // Long values are replaced as literal text, longest first so a value containing another is masked whole.
  // Not one alternation regex: a request may carry ~1 MB of values, which V8 refuses to compile ("regular
  // expression too large"), and a large alternation is slow to build; indexOf per value is linear.
  const literals = [...long].sort((a, b) => b.length - a.length)
  const words = short.size
    ? new RegExp([...short].sort((a, b) => b.length - a.length).map((s) => `(?<![A-Za-z0-9])${escape(s)}(?![A-Za-z0-9])`).join('|'), 'g')
    : undefined
  return (text) => {
    if (typeof text !== 'string') return text
    let out = text
    for (const value of literals) if (value.length <= out.length && out.includes(value)) out = out.split(value).join(MASK)
    return words ? out.replace(words, MASK) : out
  }
}

/** The values of trigger_data: {<nodeId>: {<key>: <value>}} for secrets and envVars. */
export function triggerValues(...groups: Array<Record<string, Record<string, string>> | undefined>): string[] {
  return groups.flatMap((g) => Object.values(g ?? {}).flatMap((kv) => Object.values(kv ?? {})))
}

/** Redacts every string inside a JSON-like value (a dry-run diff), keys included. */
export function redactDeep<T>(value: T, redact: Redact): T {
  if (typeof value === 'string') return redact(value) as T
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact)) as T
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k), redactDeep(v, redact)])) as T
  }
  return value
}
