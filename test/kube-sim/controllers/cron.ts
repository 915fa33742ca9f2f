// Standard 5-field cron schedules (minute hour day-of-month month day-of-week), evaluated in UTC,
// with ranges, steps, lists, month/day names and the @hourly/@daily/... macros CronJobs accept.

const macros: Record<string, string> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
}
const monthNames = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const dayNames = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']

export interface Schedule { minute: Set<number>; hour: Set<number>; dom: Set<number>; month: Set<number>; dow: Set<number>; domStar: boolean; dowStar: boolean }

function field(src: string, min: number, max: number, names?: string[]): Set<number> {
  const out = new Set<number>()
  const val = (s: string) => {
    const i = names?.indexOf(s.toLowerCase()) ?? -1
    if (i >= 0) return i + (names === monthNames ? 1 : 0)
    const n = Number(s)
    if (!Number.isInteger(n)) throw new Error(`invalid cron value "${s}"`)
    return n
  }
  for (const part of src.split(',')) {
    const [range, stepS] = part.split('/')
    const step = stepS ? Number(stepS) : 1
    if (!(step > 0)) throw new Error(`invalid cron step "${part}"`)
    let lo: number
    let hi: number
    if (range === '*' || range === '?') { lo = min; hi = max } else if (range.includes('-')) { const [a, b] = range.split('-'); lo = val(a); hi = val(b) } else { lo = val(range); hi = stepS ? max : lo }
    if (lo < min || hi > max || lo > hi) throw new Error(`cron value out of range: "${part}"`)
    for (let v = lo; v <= hi; v += step) out.add(v === 7 && names === dayNames ? 0 : v)
  }
  return out
}

export function parseSchedule(expr: string): Schedule {
  let e = expr.trim()
  e = e.replace(/^(CRON_)?TZ=\S+\s+/, '')
  e = macros[e] ?? e
  const parts = e.split(/\s+/)
  if (parts.length !== 5) throw new Error(`expected exactly 5 fields, found ${parts.length}: "${expr}"`)
  return {
    minute: field(parts[0], 0, 59), hour: field(parts[1], 0, 23), dom: field(parts[2], 1, 31),
    month: field(parts[3], 1, 12, monthNames), dow: field(parts[4], 0, 7, dayNames),
    domStar: parts[2] === '*' || parts[2] === '?', dowStar: parts[4] === '*' || parts[4] === '?',
  }
}

export function matches(s: Schedule, d: Date): boolean {
  if (!s.minute.has(d.getUTCMinutes()) || !s.hour.has(d.getUTCHours()) || !s.month.has(d.getUTCMonth() + 1)) return false
  const dom = s.dom.has(d.getUTCDate())
  const dow = s.dow.has(d.getUTCDay())
  // Vixie cron: when both day fields are restricted, either may match.
  if (!s.domStar && !s.dowStar) return dom || dow
  return dom && dow
}

/** The first scheduled minute strictly after `after` (ms), or undefined within ~4 years. */
export function nextAfter(s: Schedule, after: number): number | undefined {
  let t = Math.floor(after / 60_000) * 60_000 + 60_000
  const limit = t + 4 * 366 * 24 * 3600_000
  while (t < limit) {
    const d = new Date(t)
    if (!s.month.has(d.getUTCMonth() + 1)) { t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1); continue }
    const dayOk = (!s.domStar && !s.dowStar) ? (s.dom.has(d.getUTCDate()) || s.dow.has(d.getUTCDay())) : (s.dom.has(d.getUTCDate()) && s.dow.has(d.getUTCDay()))
    if (!dayOk) { t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1); continue }
    if (!s.hour.has(d.getUTCHours())) { t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1); continue }
    if (matches(s, d)) return t
    t += 60_000
  }
  return undefined
}
