// Compose's value syntaxes → what Kubernetes takes: Go durations → whole seconds, CPU counts → millicores,
// byte sizes → binary quantities, and command strings → argument lists (shell-word splitting, no shell).

const DURATION_PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y
const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 }

/** "1m30s", "500ms", "10s" → seconds; undefined when not a duration. */
export function durationSeconds(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) && text >= 0 ? text / 1e9 : undefined // a bare number is nanoseconds in Compose
  const s = text.trim()
  if (s === '0') return 0
  let total = 0
  DURATION_PART.lastIndex = 0
  let at = 0
  while (at < s.length) {
    DURATION_PART.lastIndex = at
    const m = DURATION_PART.exec(s)
    if (!m) return undefined
    total += Number(m[1]) * UNIT_SECONDS[m[2]]
    at = DURATION_PART.lastIndex
  }
  return at === 0 ? undefined : total
}

/** Compose cpus ("0.5", 1.5, "2") → a Kubernetes CPU quantity ("500m", "1500m", "2"). */
export function cpuQuantity(value: string | number): string | undefined {
  const n = typeof value === 'number' ? value : Number(String(value).trim())
  if (!Number.isFinite(n) || n <= 0) return undefined
  const milli = Math.round(n * 1000)
  if (milli === 0) return undefined
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`
}

const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, t: 1024 ** 4, tb: 1024 ** 4 }

/** Compose byte sizes ("512m", "1.5G", "2gb", 1048576) → the largest exact binary quantity ("512Mi", "1536Mi", "2Gi", "1Mi"). */
export function memoryQuantity(value: string | number): string | undefined {
  let bytes: number
  if (typeof value === 'number') bytes = value
  else {
    const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(value.trim())
    if (!m) return undefined
    const unit = BYTE_UNITS[m[2].toLowerCase()]
    if (unit === undefined) return undefined
    bytes = Number(m[1]) * unit
  }
  bytes = Math.round(bytes)
  if (!Number.isFinite(bytes) || bytes <= 0) return undefined
  for (const [suffix, size] of [['Ti', 1024 ** 4], ['Gi', 1024 ** 3], ['Mi', 1024 ** 2], ['Ki', 1024]] as const) {
    if (bytes % size === 0) return `${bytes / size}${suffix}`
  }
  return String(bytes)
}

/** A command string split as Compose splits it (shell words: quotes and backslashes, no expansion). */
export function shellSplit(s: string): string[] | undefined {
  const out: string[] = []
  let cur = ''
  let inWord = false
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === '\\') { if (i + 1 < s.length) { cur += s[++i]; inWord = true } continue }
    if (c === "'" || c === '"') {
      const end = s.indexOf(c, i + 1)
      if (end < 0) return undefined
      let part = s.slice(i + 1, end)
      if (c === '"') part = part.replace(/\\(["\\$`])/g, '$1')
      cur += part
      inWord = true
      i = end
      continue
    }
    if (/\s/.test(c)) { if (inWord) { out.push(cur); cur = ''; inWord = false } continue }
    cur += c
    inWord = true
  }
  if (inWord) out.push(cur)
  return out
}
