// Compose port syntaxes (short "[[ip:]published:]target[/proto]" with ranges, numbers, the long form, and
// `expose`) → container/service port pairs.
export interface PortPair { target: number; published?: number; protocol: 'TCP' | 'UDP' | 'SCTP'; internal: boolean }
export interface PortProblem { message: string }

/** Ranges longer than this are refused: a Service with thousands of ports is never what was meant. */
export const MAX_PORT_RANGE = 100

const PROTOCOLS: Record<string, PortPair['protocol']> = { tcp: 'TCP', udp: 'UDP', sctp: 'SCTP' }

function range(text: string): [number, number] | undefined {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text.trim())
  if (!m) return undefined
  const a = Number(m[1])
  const b = m[2] !== undefined ? Number(m[2]) : a
  if (a < 1 || b > 65535 || b < a) return undefined
  return [a, b]
}

export function parsePort(entry: unknown, internal: boolean): { pairs: PortPair[]; problem?: string } {
  if (typeof entry === 'number') return entry >= 1 && entry <= 65535 ? { pairs: [{ target: entry, protocol: 'TCP', internal }] } : { pairs: [], problem: 'port out of range' }
  if (entry && typeof entry === 'object') {
    const o = entry as { target?: number | string; published?: number | string; protocol?: string }
    const target = range(String(o.target ?? ''))
    const protocol = PROTOCOLS[String(o.protocol ?? 'tcp').toLowerCase()]
    if (!target || !protocol) return { pairs: [], problem: 'target or protocol not understood' }
    const published = o.published !== undefined && o.published !== '' ? range(String(o.published)) : undefined
    return { pairs: [{ target: target[0], ...(published && { published: published[0] }), protocol, internal }] }
  }
  let text = String(entry)
  let protocol: PortPair['protocol'] = 'TCP'
  const slash = text.lastIndexOf('/')
  if (slash >= 0) {
    const p = PROTOCOLS[text.slice(slash + 1).toLowerCase()]
    if (!p) return { pairs: [], problem: 'unknown protocol' }
    protocol = p
    text = text.slice(0, slash)
  }
  // An IPv6 host address comes in brackets; drop any host address.
  text = text.replace(/^\[[^\]]*\]:/, '')
  const parts = text.split(':')
  if (parts.length > 3) return { pairs: [], problem: 'not [[ip:]published:]target' }
  const targetText = parts.at(-1)!
  const publishedText = parts.length >= 2 ? parts.at(-2)! : ''
  const target = range(targetText)
  if (!target) return { pairs: [], problem: 'not [[ip:]published:]target' }
  const published = publishedText !== '' ? range(publishedText) : undefined
  if (publishedText !== '' && !published) return { pairs: [], problem: 'published port not understood' }
  const count = target[1] - target[0] + 1
  if (count > MAX_PORT_RANGE) return { pairs: [], problem: `a range of ${count} ports (at most ${MAX_PORT_RANGE})` }
  const pairs: PortPair[] = []
  for (let i = 0; i < count; i++) {
    const pub = published ? (published[1] - published[0] + 1 === count ? published[0] + i : (i === 0 ? published[0] : undefined)) : undefined
    pairs.push({ target: target[0] + i, ...(pub !== undefined && { published: pub }), protocol, internal })
  }
  return { pairs }
}
