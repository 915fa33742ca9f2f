// Error bodies in the UI's dialect: `{error, message}` with the same text (the login and register pages
// read only `message`; the rest read `error`). /v1/api keeps `{error}`, as the spec says.
import type { FastifyReply, FastifyRequest } from 'fastify'

export async function withMessage(_req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode < 400 || typeof payload !== 'string' || !payload.startsWith('{"error":')) return payload
  try {
    const body = JSON.parse(payload) as Record<string, unknown>
    if (typeof body.error !== 'string' || 'message' in body) return payload
    return JSON.stringify({ ...body, message: body.error })
  } catch {
    return payload
  }
}
