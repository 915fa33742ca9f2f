// A `fetch` for calls that follow redirects by hand (the registry handshake): the same Response API, but each
// request goes through a guarded agent (guarded-agent.ts), so the address connected to is the address the
// outbound policy checked, with no second DNS answer in between. It never follows a redirect: a 3xx comes
// back as it is (what `redirect: 'manual'` asks for), and the caller checks the next hop before asking.
import http from 'node:http'
import https from 'node:https'
import { Readable } from 'node:stream'
import { guardAgent, originOfUrl } from './guarded-agent.ts'
import type { OutboundPolicy } from './outbound-policy.ts'

const NULL_BODY = new Set([101, 204, 205, 304])

export function guardedFetch(policy: OutboundPolicy, what: string): typeof fetch {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`unsupported protocol ${url.protocol}`)
    const secure = url.protocol === 'https:'
    const agent = guardAgent(secure ? new https.Agent({ keepAlive: false }) : new http.Agent({ keepAlive: false }), { policy, origin: originOfUrl(url.href), what })
    const headers = Object.fromEntries(new Headers(init.headers).entries())
    const body = init.body === undefined || init.body === null ? undefined : typeof init.body === 'string' ? init.body : Buffer.from(await new Response(init.body).arrayBuffer())
    try {
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = (secure ? https.request : http.request)(url, { method: init.method ?? 'GET', headers, agent, ...(init.signal && { signal: init.signal }) }, resolve)
        req.on('error', reject)
        req.end(body)
      })
      res.on('close', () => agent.destroy())
      const replyHeaders = new Headers()
      for (const [name, value] of Object.entries(res.headers)) {
        for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) replyHeaders.append(name, v)
      }
      const status = res.statusCode ?? 0
      const stream = NULL_BODY.has(status) || init.method === 'HEAD' ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>)
      if (!stream) res.resume()
      return new Response(stream, { status, statusText: res.statusMessage, headers: replyHeaders })
    } catch (err) {
      agent.destroy()
      throw err
    }
  }
}
