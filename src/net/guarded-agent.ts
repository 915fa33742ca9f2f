// Connections that can only go where the outbound policy allows, whichever library makes them. client-node
// sends every request (API calls, watches, the health check, logs, exec and attach over WebSocket) through an
// http(s).Agent; node-fetch follows redirects through that same agent. So the agent is where each hop is
// checked: it opens sockets only to the origin it was made for (a redirect elsewhere, to any address in any
// spelling, fails before a packet is sent), a literal address is checked as it stands, and a name is
// resolved by the policy's own lookup, so the socket connects to the address that was checked. TLS still
// verifies the certificate against the host name (SNI and the identity check use the name, not the address).
import http from 'node:http'
import https from 'node:https'
import type { Duplex } from 'node:stream'
import { canonicalAddress } from './ip-address.ts'
import { OutboundPolicyError, type OutboundPolicy } from './outbound-policy.ts'

export interface AgentGuard {
  policy: OutboundPolicy
  /** The one origin the agent may connect to, from the configured server URL. */
  origin: string
  /** How refusals name the target ("cluster server"). */
  what: string
}

const guards = new WeakMap<http.Agent, AgentGuard>()

type Create = (options: http.ClientRequestArgs & { lookup?: unknown }, callback?: (err: Error | null, socket?: Duplex) => void) => Duplex | undefined

function originOf(protocol: string, host: string, port: string | number | null | undefined): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  const shown = bare.includes(':') ? `[${bare}]` : bare
  const fallback = protocol === 'https:' ? '443' : '80'
  return `${protocol}//${shown}:${port === undefined || port === null || port === '' ? fallback : String(port)}`
}

/** The origin a URL names, with its port spelled out: `https://host:443`. */
export function originOfUrl(url: string): string {
  const u = new URL(url)
  return originOf(u.protocol, u.hostname, u.port)
}

/**
 * Makes `agent` refuse every connection the guard does not allow; returns the same agent. Idempotent.
 * The refusal is an OutboundPolicyError (code ERR_OUTBOUND_POLICY), raised before any packet is sent.
 */
export function guardAgent<A extends http.Agent>(agent: A, guard: AgentGuard): A {
  if (guards.has(agent)) return agent
  guards.set(agent, guard)
  const protocol = agent instanceof https.Agent ? 'https:' : 'http:'
  const original = (agent as unknown as { createConnection: Create }).createConnection
  const create: Create = function (this: http.Agent, options, callback) {
    try {
      const host = String(options.host ?? options.hostname ?? 'localhost')
      if (originOf(protocol, host, options.port) !== guard.origin) {
        throw new OutboundPolicyError(`${guard.what}: a connection to another address than the configured server is not allowed (a redirect?)`)
      }
      // An address as such is never resolved (net.connect skips lookup for one), so it is judged here.
      if (canonicalAddress(host)) guard.policy.checkAddress(host, guard.what)
      else options = { ...options, lookup: guard.policy.lookup(guard.what) }
    } catch (err) {
      // Agent.createSocket accepts a callback-style failure; the request then emits this error.
      if (callback) { callback(err as Error); return undefined }
      throw err
    }
    return original.call(this, options, callback)
  }
  ;(agent as unknown as { createConnection: Create }).createConnection = create
  return agent
}

/** The guard an agent carries, if any. */
export function guardOf(agent: http.Agent): AgentGuard | undefined {
  return guards.get(agent)
}

/**
 * A keep-alive copy of an agent (same TLS material), guarded as the original was: a pool made from a
 * guarded agent must not be a way around its guard.
 */
export function pooledCopy(agent: http.Agent, extra: http.AgentOptions): http.Agent {
  const options = { ...(agent as http.Agent & { options: http.AgentOptions }).options, ...extra }
  const copy = agent instanceof https.Agent ? new https.Agent(options) : new http.Agent(options)
  const guard = guards.get(agent)
  return guard ? guardAgent(copy, guard) : copy
}
