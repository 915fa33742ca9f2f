// Shapes used by every route group.
import { Type, type TSchema } from 'typebox'

export const ErrorResponse = Type.Object({ error: Type.String({ description: 'human-readable message' }) }, {
  $id: 'ErrorResponse', additionalProperties: false, description: 'every failure has exactly this body',
})

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid input or missing fields',
  401: 'token missing, invalid or expired',
  403: 'role too low',
  404: 'not found, or not yours',
  409: 'duplicate or state conflict',
  413: 'request body too large',
  414: 'a path parameter is too long',
  415: 'unsupported content type',
  422: 'too costly to process: the work took longer, or more memory, than one job may use (WORKER_JOB_TIMEOUT_MS)',
  429: 'rate limited',
  502: 'the cluster, registry or git host answered badly or not at all',
  503: 'a dependency is unavailable',
  507: "the database's disk is full; the change was not stored",
}

/** The `{error}` reply for each listed status code, for a route's `response` schema. */
export function errorResponses(...codes: number[]): Record<number, TSchema> {
  return Object.fromEntries(codes.map((code) => [code, Type.Ref('ErrorResponse', { description: ERROR_DESCRIPTIONS[code] ?? 'error' })]))
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' })
export const Id = Type.String({ minLength: 1, maxLength: 64, description: 'record id' })

/** A string from a fixed set, as a JSON-schema `enum` (typed as the union of its values). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

/**
 * A query or body property with a `default`: optional in the schema (so neither the OpenAPI document nor a
 * generated client requires it) yet typed as present for the handler, because validation (ajv
 * `useDefaults`) always fills the default in before the handler runs.
 */
export function Defaulted<T extends TSchema>(schema: T): T {
  if ((schema as { default?: unknown }).default === undefined) throw new Error('Defaulted needs a schema with a default')
  return Type.Optional(schema) as unknown as T
}
