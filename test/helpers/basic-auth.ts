// HTTP Basic credentials of a request, for the loopback servers tests start (git, registries).
import type { IncomingMessage } from 'node:http'

export function basicLogin(req: IncomingMessage): { user: string; pass: string } | null {
  const m = /^Basic (.+)$/.exec(req.headers.authorization ?? '')
  if (!m) return null
  const text = Buffer.from(m[1], 'base64').toString('utf8')
  const colon = text.indexOf(':')
  return colon === -1 ? null : { user: text.slice(0, colon), pass: text.slice(colon + 1) }
}
