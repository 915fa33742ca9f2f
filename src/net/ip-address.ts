// One spelling for every IP address, so that the outbound policy judges the address a connection would
// reach and not the way it was written. The same loopback can be written 127.0.0.1, 2130706433, 0177.0.0.1,
// 0x7f000001, 127.1, ::ffff:127.0.0.1, ::ffff:7f00:1, 64:ff9b::7f00:1 …: the URL parser folds the IPv4
// forms of a URL's host, but resolver answers, socket options and IPv6 forms with an IPv4 address inside
// reach the policy unfolded, so they are folded here.
import { isIP } from 'node:net'

export interface CanonicalAddress {
  /** Dotted quad, or the full lower-case IPv6 form (eight groups, no `::`). */
  address: string
  family: 4 | 6
  /** For an IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4, compatible): that address. */
  embedded?: string
}

export type AddressClass = 'loopback' | 'unspecified' | 'link-local' | 'metadata' | 'other'

/**
 * IPv4 as inet_aton reads it (what getaddrinfo and so `connect` accept): one to four parts, each decimal,
 * octal (leading 0) or hex (0x), the last part filling the remaining bytes.
 */
function parseIPv4Loose(text: string): number | undefined {
  const parts = text.split('.')
  if (parts.length > 4 || parts.some((p) => p === '')) return undefined
  const values: number[] = []
  for (const part of parts) {
    let value: number
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : parseInt(part.slice(2), 16)
    else if (/^0[0-7]+$/.test(part)) value = parseInt(part.slice(1), 8)
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number(part)
    else return undefined
    if (!Number.isSafeInteger(value)) return undefined
    values.push(value)
  }
  const last = values.pop()!
  if (values.some((v) => v > 255) || last >= 2 ** (8 * (4 - values.length))) return undefined
  return values.reduce((acc, v, i) => acc + v * 2 ** (8 * (3 - i)), 0) + last
}

const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')

/** The eight 16-bit groups of an IPv6 address (already validated by isIP). */
function groupsOf(text: string): number[] {
  let body = text
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(body)
  if (v4) {
    const n = parseIPv4Loose(v4[1])!
    body = `${body.slice(0, -v4[1].length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
  }
  const [head, tail] = body.split('::')
  const left = head ? head.split(':') : []
  const right = tail !== undefined && tail !== '' ? tail.split(':') : []
  const fill = tail === undefined ? 0 : 8 - left.length - right.length
  return [...left, ...Array<string>(fill).fill('0'), ...right].map((g) => parseInt(g, 16))
}

/** The IPv4 address an IPv6 one stands for, where connecting to it would reach (or be relayed to) that address. */
function embeddedIPv4(g: number[]): number | undefined {
  const v4 = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6], g[7]) // ::ffff:a.b.c.d, IPv4-mapped
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6], g[7]) // ::ffff:0:a.b.c.d, IPv4-translated (SIIT)
  if (zero(0, 6) && (g[6] !== 0 || g[7] > 1)) return v4(g[6], g[7]) // ::a.b.c.d, IPv4-compatible (deprecated, still routed by some stacks)
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7]) // 64:ff9b::/96, NAT64 well-known prefix
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return v4(g[6], g[7]) // 64:ff9b:1::/48, local-use NAT64
  if (g[0] === 0x2002) return v4(g[1], g[2]) // 2002::/16, 6to4
  return undefined
}

/**
 * The canonical form of an address as written in a URL host, a resolver answer or a socket option
 * (brackets and an IPv6 zone allowed), or undefined when it is not an IP address (a host name).
 */
export function canonicalAddress(raw: string): CanonicalAddress | undefined {
  const text = raw.trim().replace(/^\[(.*)\]$/, '$1').replace(/%[^%]*$/, '').toLowerCase()
  if (isIP(text) === 6) {
    const g = groupsOf(text)
    const inner = embeddedIPv4(g)
    return { address: g.map((x) => x.toString(16)).join(':'), family: 6, ...(inner !== undefined && { embedded: dotted(inner) }) }
  }
  // Only something made of digits, dots and hex can be an IPv4 spelling; anything else is a host name.
  if (!/^[0-9a-fx.]+$/.test(text) || !/^[0-9]/.test(text)) return undefined
  const n = parseIPv4Loose(text)
  return n === undefined ? undefined : { address: dotted(n), family: 4 }
}

const METADATA = new Set(['169.254.169.254', '100.100.100.200', '192.0.0.192', 'fd00:ec2:0:0:0:0:0:254'])

function classifyIPv4(address: string): AddressClass {
  if (METADATA.has(address)) return 'metadata'
  const [a, b] = address.split('.').map(Number)
  if (a === 127) return 'loopback'
  if (a === 0) return 'unspecified' // 0.0.0.0/8, "this network": connects to the local host on Linux
  if (a === 169 && b === 254) return 'link-local'
  return 'other'
}

/** What kind of address this is, judging an IPv6 address that carries an IPv4 one by the IPv4 one. */
export function classifyAddress(c: CanonicalAddress): AddressClass {
  if (c.family === 4) return classifyIPv4(c.address)
  if (c.embedded) return classifyIPv4(c.embedded)
  if (METADATA.has(c.address)) return 'metadata'
  if (c.address === '0:0:0:0:0:0:0:1') return 'loopback'
  if (c.address === '0:0:0:0:0:0:0:0') return 'unspecified'
  if (/^fe[89ab]/.test(c.address)) return 'link-local' // fe80::/10
  return 'other'
}
