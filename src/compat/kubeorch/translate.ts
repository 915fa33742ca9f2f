// Field-name translation between the UI's dialect and this API's. Requests are translated *before*
// validation (a preValidation hook), so the canonical TypeBox schema of the /v1/api route checks what the
// service receives: the adapter never validates less than the API it stands for.
import type { FastifyRequest } from 'fastify'

/** A JSON object, as requests and answers are handled here. */
export type Json = Record<string, unknown>

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** snake_case → camelCase of one key (`cluster_id` → `clusterId`). */
export const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())
/** camelCase → snake_case of one key (`caData` → `ca_data`). */
export const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * The object with a camelCase alias beside every snake_case key (shallow; the snake keys stay, because
 * the UI reads snake_case on some endpoints and camelCase on others).
 */
export function withCamelAliases<T extends Json>(obj: T): T & Json {
  const out: Json = { ...obj }
  for (const [key, value] of Object.entries(obj)) {
    if (key.includes('_')) { const alias = camel(key); if (!(alias in out)) out[alias] = value }
  }
  return out as T & Json
}

/**
 * A request object with the UI's names renamed to this API's: `renames` first (`{ authType: 'auth_type' }`),
 * then every other camelCase key snake_cased; keys in `drop` (fields the UI sends that mean nothing here,
 * such as `confirmPassword` once checked) are removed. Anything else passes through, so the canonical schema
 * refuses it as it would on /v1/api. Non-objects are returned unchanged (the schema refuses them).
 */
export function toCanonical(value: unknown, renames: Record<string, string> = {}, drop: readonly string[] = []): unknown {
  if (!isObject(value)) return value
  const out: Json = {}
  for (const [key, v] of Object.entries(value)) {
    if (drop.includes(key)) continue
    const name = renames[key] ?? (/[A-Z]/.test(key) ? snake(key) : key)
    // A canonical name sent as well as its UI alias: the canonical one wins.
    if (name in out && name !== key) continue
    out[name] = v
  }
  return out
}

/** preValidation hook that rewrites the body with `toCanonical`. */
export function canonicalBody(renames: Record<string, string> = {}, drop: readonly string[] = []) {
  return async (req: FastifyRequest) => { req.body = toCanonical(req.body, renames, drop) }
}

/** preValidation hook that rewrites the query string with `toCanonical`. */
export function canonicalQuery(renames: Record<string, string> = {}, drop: readonly string[] = []) {
  return async (req: FastifyRequest) => { req.query = toCanonical(req.query, renames, drop) }
}

/**
 * The UI pages by `limit`/`offset`; this API by `page`/`limit`. An offset that is not a multiple of the
 * limit starts at the page holding it (the UI only sends multiples).
 */
export function offsetToPage(query: Json, defaultLimit = 20): Json {
  const { offset, ...rest } = query
  if (offset === undefined) return rest
  const limit = Number(rest.limit ?? defaultLimit)
  const start = Number(offset)
  // Left as sent when not numbers: the canonical schema refuses them with a clear message.
  if (!Number.isFinite(limit) || !Number.isFinite(start) || limit <= 0 || start < 0) return { ...rest, page: offset }
  return { ...rest, page: String(Math.floor(start / limit) + 1) }
}
