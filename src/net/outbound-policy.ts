// Where the server may connect on a user's behalf (cluster API servers, OIDC issuers, registries, Git hosts).
// Users' clusters are often on private networks, so private ranges are allowed; link-local, unspecified and
// cloud metadata addresses never are, whether written literally, in any spelling, or reached through DNS.
// Loopback is the server's own host: refused in production unless OUTBOUND_ALLOW_CIDRS names it, allowed
// in development and test (the Kubernetes simulator listens there). An allow-list narrows everything further.
//
// A check is only as good as the connection that follows it, so the policy also gives connections a
// resolver (`lookup`) that checks every answer and hands back only what it checked: the socket connects to
// the address that was judged, never to a second resolution (see guarded-agent.ts).
import { BlockList, isIP, type LookupFunction } from 'node:net'
import { lookup } from 'node:dns/promises'
import { BadRequest } from '../errors.ts'
import { canonicalAddress, classifyAddress, type AddressClass, type CanonicalAddress } from './ip-address.ts'

export interface OutboundPolicyOptions {
  /** Permit plain http (ALLOW_INSECURE_CLUSTERS). */
  allowInsecure: boolean
  /** When non-empty, only addresses inside these CIDRs (OUTBOUND_ALLOW_CIDRS). */
  allowCidrs: string[]
  /** Refuse loopback addresses that allowCidrs does not name (production). */
  refuseLoopback?: boolean
  /** Name resolution; injectable so tests can point a name anywhere. */
  resolve?: (host: string) => Promise<string[]>
}

/** The code of a connection the policy refused; describeNetworkError words it the same way every time. */
export const POLICY_REFUSED = 'ERR_OUTBOUND_POLICY'

export class OutboundPolicyError extends BadRequest {
  readonly code = POLICY_REFUSED
}

const NEVER: Partial<Record<AddressClass, string>> = {
  metadata: 'cloud metadata',
  'link-local': 'link-local',
  unspecified: 'unspecified, reaches the local host',
}

const defaultResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)

function parseCidr(cidr: string): { net: string; bits: number; family: 'ipv4' | 'ipv6' } {
  const [net, bits] = cidr.split('/')
  const family = isIP(net)
  const max = family === 6 ? 128 : 32
  if (!family || !/^\d+$/.test(bits ?? '') || Number(bits) > max) throw new Error(`OUTBOUND_ALLOW_CIDRS: "${cidr}" is not a CIDR`)
  return { net, bits: Number(bits), family: family === 6 ? 'ipv6' : 'ipv4' }
}

export class OutboundPolicy {
  private readonly allowed: BlockList | undefined
  private readonly resolve: (host: string) => Promise<string[]>

  constructor(private readonly options: OutboundPolicyOptions) {
    this.resolve = options.resolve ?? defaultResolve
    if (options.allowCidrs.length) {
      this.allowed = new BlockList()
      for (const cidr of options.allowCidrs) {
        const { net, bits, family } = parseCidr(cidr)
        this.allowed.addSubnet(net, bits, family)
      }
    }
  }

  /** One line for the start-up log: what is refused and what is allowed. */
  describe(): string {
    const never = 'link-local, unspecified and cloud metadata addresses always refused'
    const loopback = this.options.refuseLoopback ? 'loopback refused unless OUTBOUND_ALLOW_CIDRS names it' : 'loopback allowed (not production)'
    const list = this.allowed ? `only ${this.options.allowCidrs.join(', ')} allowed` : 'any other address allowed (OUTBOUND_ALLOW_CIDRS unset)'
    return `outbound policy: ${never}; ${loopback}; ${list}; plain http ${this.options.allowInsecure ? 'allowed' : 'refused'}`
  }

  /**
   * What can be judged from the URL alone, without the network: scheme, no credentials, and a literal
   * address outside the refused ranges. For saving an address (a registry, an OIDC issuer): a name need not
   * resolve from here at that moment, and where it points is checked by `check` on every connection.
   */
  checkFormat(rawUrl: string, what = 'server'): URL {
    let url: URL
    try { url = new URL(rawUrl) } catch { throw new BadRequest(`${what} must be an absolute URL`) }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.options.allowInsecure)) {
      throw new BadRequest(`${what} must use https${this.options.allowInsecure ? ' or http' : ''}`)
    }
    if (url.username || url.password) throw new BadRequest(`${what} must not carry credentials in the URL`)
    if (canonicalAddress(url.hostname)) this.checkAddress(url.hostname, what)
    return url
  }

  /** Throws BadRequest when the URL's address is not one the server may connect to (resolving names). */
  async check(rawUrl: string, what = 'server'): Promise<URL> {
    const url = this.checkFormat(rawUrl, what)
    if (canonicalAddress(url.hostname)) return url
    await this.resolveChecked(url.hostname, what)
    return url
  }

  /** The addresses a name resolves to, every one of them allowed (or an OutboundPolicyError / BadRequest). */
  async resolveChecked(host: string, what = 'server'): Promise<string[]> {
    let addresses: string[]
    try { addresses = await this.resolve(host) } catch { throw new BadRequest(`${what} host "${host}" does not resolve`) }
    if (!addresses.length) throw new BadRequest(`${what} host "${host}" does not resolve`)
    for (const a of addresses) this.checkAddress(a, what)
    return addresses
  }

  /**
   * Throws OutboundPolicyError unless a connection to this address (any spelling) is allowed. Decided
   * before any packet is sent, so the answer is the same whether something listens there or not.
   */
  checkAddress(raw: string, what = 'server'): CanonicalAddress {
    const c = canonicalAddress(raw)
    if (!c) throw new OutboundPolicyError(`${what} address is not an IP address`)
    const kind = classifyAddress(c)
    const shown = c.embedded ?? displayAddress(c)
    const never = NEVER[kind]
    if (never) throw new OutboundPolicyError(`${what} address ${shown} is not allowed (${never})`)
    const listed = this.allowed ? this.allowedByList(c) : false
    if (this.allowed && !listed) throw new OutboundPolicyError(`${what} address ${shown} is not allowed: it is outside OUTBOUND_ALLOW_CIDRS`)
    if (kind === 'loopback' && this.options.refuseLoopback && !listed) {
      throw new OutboundPolicyError(`${what} address ${shown} is not allowed (loopback; OUTBOUND_ALLOW_CIDRS can allow it)`)
    }
    return c
  }

  private allowedByList(c: CanonicalAddress): boolean {
    if (c.embedded && this.allowed!.check(c.embedded, 'ipv4')) return true
    return this.allowed!.check(c.address, c.family === 6 ? 'ipv6' : 'ipv4')
  }

  /**
   * A resolver for sockets (net.connect's `lookup` option): resolves once, checks every answer, and
   * returns only checked addresses, so the connection goes where the policy looked.
   */
  lookup(what = 'server'): LookupFunction {
    return (hostname, options, callback) => {
      this.resolveChecked(hostname, what).then(
        (addresses) => {
          const list = addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }))
          const wanted = options.family === 4 || options.family === 6 ? list.filter((a) => a.family === options.family) : list
          if (!wanted.length) return callback(Object.assign(new Error(`${what} host has no address of the requested family`), { code: 'ENOTFOUND' }), '', 4)
          if (options.all) (callback as unknown as (err: null, all: typeof list) => void)(null, wanted)
          else callback(null, wanted[0].address, wanted[0].family)
        },
        (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
      )
    }
  }
}

/** An IPv6 address in its short form (longest run of zero groups as `::`), for messages. */
function displayAddress(c: CanonicalAddress): string {
  if (c.family === 4) return c.address
  const groups = c.address.split(':')
  let best = -1, bestLen = 1
  for (let i = 0; i < groups.length; i++) {
    let j = i
    while (j < groups.length && groups[j] === '0') j++
    if (j - i > bestLen) { best = i; bestLen = j - i }
  }
  if (best < 0) return c.address
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`
}

/** The policy for a configuration: production refuses loopback unless OUTBOUND_ALLOW_CIDRS names it. */
export function outboundPolicyFor(config: { NODE_ENV: string; ALLOW_INSECURE_CLUSTERS: boolean; OUTBOUND_ALLOW_CIDRS?: string }): OutboundPolicy {
  return new OutboundPolicy({
    allowInsecure: config.ALLOW_INSECURE_CLUSTERS,
    allowCidrs: (config.OUTBOUND_ALLOW_CIDRS ?? '').split(',').map((c) => c.trim()).filter(Boolean),
    refuseLoopback: config.NODE_ENV === 'production',
  })
}
