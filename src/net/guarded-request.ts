// One HTTP request held to the outbound policy, for the small JSON exchanges made on a user's behalf (an
// OIDC issuer's discovery document and token endpoint). The connection goes through a guarded agent, so
// the address connected to is the one checked; a redirect is never followed (its target was not checked).
import http from 'node:http'
import https from 'node:https'
import { guardAgent, originOfUrl } from './guarded-agent.ts'
import type { OutboundPolicy } from './outbound-policy.ts'

export interface GuardedRequest {
  policy: OutboundPolicy
  /** How refusals name the target ("issuer_url"). */
  what: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  timeoutMs: number
  /** A larger answer is an error, not a truncation. */
  maxBytes: number
}

export interface GuardedReply { status: number; redirected: boolean; body: string }

/** The reply's status and body (read up to maxBytes); rejects on refusal (BadRequest), network failure or timeout. */
export async function guardedRequest(rawUrl: string, req: GuardedRequest): Promise<GuardedReply> {
  const url = await req.policy.check(rawUrl, req.what)
  const secure = url.protocol === 'https:'
  const agent = guardAgent(secure ? new https.Agent({ keepAlive: false }) : new http.Agent({ keepAlive: false }), { policy: req.policy, origin: originOfUrl(url.toString()), what: req.what })
  try {
    return await new Promise<GuardedReply>((resolve, reject) => {
      const send = secure ? https.request : http.request
      const request = send(url, { method: req.method ?? 'GET', headers: req.headers, agent, signal: AbortSignal.timeout(req.timeoutMs) }, (res) => {
        const status = res.statusCode ?? 0
        if (status >= 300 && status < 400) {
          res.destroy()
          resolve({ status, redirected: true, body: '' })
          return
        }
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > req.maxBytes) { res.destroy(); reject(Object.assign(new Error('answer too large'), { code: 'ERR_ANSWER_TOO_LARGE' })); return }
          chunks.push(chunk)
        })
        res.on('end', () => resolve({ status, redirected: false, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', reject)
      })
      request.on('error', reject)
      request.end(req.body)
    })
  } finally {
    agent.destroy()
  }
}
