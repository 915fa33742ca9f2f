// The one JSON body parser. It accepts exactly what a route can store and answer: an object (or no body at
// all), bounded in depth and keys, so a document that the database cannot hold or the reply cannot
// serialize is refused before any handler runs, on every route, including routes added later.
import type { FastifyInstance } from 'fastify'
import { BadRequest } from './errors.ts'
import { MAX_JSON_DEPTH, MAX_JSON_KEYS, MAX_JSON_KEY_LENGTH } from '../schemas/json.ts'

const shown = (key: string) => JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)
// JSON-pointer style, so a key holding "/" cannot be mistaken for two levels; long keys are cut so a
// message stays short.
const segment = (key: string) => (key.length > 40 ? `${key.slice(0, 40)}…` : key).replaceAll('~', '~0').replaceAll('/', '~1')

/** Why a parsed body cannot be accepted, naming the field (`body/metadata/a`), or undefined when it can. */
export function jsonBodyProblem(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'body must be a JSON object'
  let keys = 0
  // Depth-first with an explicit stack: the depth bound is checked before descending, so no input can
  // make this walk recurse or run long.
  const stack: Array<{ value: object; path: string; depth: number }> = [{ value: body, path: 'body', depth: 1 }]
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!
    if (depth > MAX_JSON_DEPTH) return `${path} nests deeper than ${MAX_JSON_DEPTH} levels`
    const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value)
    if (!Array.isArray(value)) {
      keys += entries.length
      if (keys > MAX_JSON_KEYS) return `body has more than ${MAX_JSON_KEYS} keys`
      for (const [key] of entries) {
        if (key.includes('\u0000')) return `${path} has a key with a NUL byte (${shown(key)})`
        if (key.length > MAX_JSON_KEY_LENGTH) return `${path} has a key longer than ${MAX_JSON_KEY_LENGTH} characters (${shown(key)})`
      }
    }
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!
      if (child !== null && typeof child === 'object') stack.push({ value: child, path: `${path}/${segment(key)}`, depth: depth + 1 })
    }
  }
  return undefined
}

/**
 * Replaces Fastify's parsers: JSON only (text/plain and anything else is 415), `__proto__` and
 * `constructor.prototype` refused as before, an empty body read as no body (a body-less POST sent with
 * `Content-Type: application/json` works), and every body checked by jsonBodyProblem.
 */
export function useJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    if (typeof text === 'string' && text.trim() === '') return done(null, undefined)
    parse(request, text as string, (err: Error | null, body?: unknown) => {
      if (err) return done(err, undefined)
      const problem = jsonBodyProblem(body)
      if (problem) return done(new BadRequest(problem), undefined)
      done(null, body)
    })
  })
  // No body at all, for a route that takes one, is an empty object: the schema then says which field is
  // missing, fills in defaults, and the handler never sees undefined where its type promises an object.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body !== undefined) request.body = {}
  })
}
