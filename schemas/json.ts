// Free-form JSON: objects the client shapes itself (workflow metadata, canvas node data and extra keys).
// Every JSON body is bounded as a whole when it is parsed (src/json-body.ts), so these limits hold for every
// free-form field of every route, including routes added later; the schemas here only document them.
import { Type } from 'typebox'

/** Deepest nesting of objects and arrays in a request body (the body itself is level 1). */
export const MAX_JSON_DEPTH = 64
/** Most object keys in one request body, counted over every level. */
export const MAX_JSON_KEYS = 200_000
/** Longest object key, in characters. */
export const MAX_JSON_KEY_LENGTH = 1024

export const JSON_LIMITS_TEXT = `nesting at most ${MAX_JSON_DEPTH} levels deep in the body; keys up to ${MAX_JSON_KEY_LENGTH} characters without NUL bytes (keys starting with $ or containing . are kept as data)`

/** A free-form JSON object, stored and returned unchanged within the body limits. */
export const FreeObject = (description: string) =>
  Type.Record(Type.String(), Type.Unknown(), { description: `${description}; ${JSON_LIMITS_TEXT}` })
