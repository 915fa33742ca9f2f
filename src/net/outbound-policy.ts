// Where the server may connect on a user's behalf (cluster API servers, registries). Users' clusters are
// often on private networks, so private ranges and loopback are allowed; link-local and cloud metadata
// addresses never are, whether written literally or reached through DNS. An optional allow-list narrows
// everything further.
import { BlockList, isIP } from 'node:net'
import { lookup } from 'node:dns/promises'
import { BadRequest } from '../errors.ts'

export interface OutboundPolicyOptions {
  /** Permit plain http (ALLOW_INSECURE_CLUSTERS). */
  allowInsecure: boolean
  /** When non-empty, only addresses inside these CIDRs (OUTBOUND_ALLOW_CIDRS). */
  allowCidrs: string[]
  /** Name resolution; injectable so tests can point a name anywhere. */
  resolve?: (host: string) => Promise<string[]>
}

const ALWAYS_REFUSED = new BlockList()
ALWAYS_REFUSED.addSubnet('169.254.0.0', 16, 'ipv4') // link-local, incl. 169.254.169.254 (AWS, GCP, Azure, OpenStack)
ALWAYS_REFUSED.addSubnet('fe80::', 10, 'ipv6') // link-local
ALWAYS_REFUSED.addAddress('fd00:ec2::254', 'ipv6') // AWS metadata over IPv6
ALWAYS_REFUSED.addAddress('100.100.100.200', 'ipv4') // Alibaba Cloud metadata
ALWAYS_REFUSED.addAddress('192.0.0.192', 'ipv4') // Oracle Cloud metadata
ALWAYS_REFUSED.addSubnet('0.0.0.0', 8, 'ipv4') // "this network": reaches the local host on some systems
ALWAYS_REFUSED.addAddress('::', 'ipv6')

const defaultResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4'
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is checked as the IPv4 address it is. */
function unmap(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return m ? m[1] : address
}

export class OutboundPolicy {
  private readonly allowed: BlockList | undefined
  private readonly resolve: (host: string) => Promise<string[]>

  constructor(private readonly options: OutboundPolicyOptions) {
    this.resolve = options.resolve ?? defaultResolve
    if (options.allowCidrs.length) {
      this.allowed = new BlockList()
      for (const cidr of options.allowCidrs) {
        const [net, bits] = cidr.split('/')
        if (!isIP(net) || !/^\d+$/.test(bits ?? '')) throw new Error(`OUTBOUND_ALLOW_CIDRS: "${cidr}" is not a CIDR`)
        this.allowed.addSubnet(net, Number(bits), family(net))
      }
    }
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
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (isIP(host)) this.checkAddresses([host], what)
    return url
  }

  /** Throws BadRequest when the URL's address is not one the server may connect to (resolving names). */
  async check(rawUrl: string, what = 'server'): Promise<URL> {
    const url = this.checkFormat(rawUrl, what)
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (isIP(host)) return url
    let addresses: string[]
    try { addresses = await this.resolve(host) } catch { throw new BadRequest(`${what} host "${host}" does not resolve`) }
    if (!addresses.length) throw new BadRequest(`${what} host "${host}" does not resolve`)
    this.checkAddresses(addresses, what)
    return url
  }

  private checkAddresses(addresses: string[], what: string): void {
    for (const raw of addresses) {
      const address = unmap(raw)
      if (ALWAYS_REFUSED.check(address, family(address))) throw new BadRequest(`${what} address ${address} is not allowed (link-local or cloud metadata)`)
      if (this.allowed && !this.allowed.check(address, family(address))) throw new BadRequest(`${what} address ${address} is outside OUTBOUND_ALLOW_CIDRS`)
    }
  }
}
