// Hostile request parts: values of the wrong type, keys a database cannot hold, nesting no client sends,
// bodies that are not objects, malformed JSON, path segments and query values that are not what the
// route expects. Each is a named case so a counterexample reads as what was sent.
import fc from 'fast-check'

/** JSON text spliced verbatim into a serialized body (nesting too deep to build as a value). */
export class RawJson {
  constructor(readonly text: string, readonly label: string) {}
  toJSON() { return `<${this.label}>` }
}

/** Serializes a body that may contain RawJson pieces. */
export function serializeBody(value: unknown): string {
  if (value instanceof RawJson) return value.text
  if (Array.isArray(value)) return `[${value.map((v) => serializeBody(v === undefined ? null : v)).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => `${JSON.stringify(k)}:${serializeBody(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

const nested = (depth: number, open: string, close: string, leaf = '1') => new RawJson(open.repeat(depth) + leaf + close.repeat(depth), `${depth} levels of ${open}`)

/** Free-form JSON no schema refuses: keys a document store cannot hold or treats as operators, and
 * nesting deeper than any client's document. */
export const freeFormAttack: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    { 'a\u0000b': 1 }, { x: { '\u0000': 'v' } }, { $gt: '' }, { $set: { owner_id: 'x' } }, { 'a.b': { 'c.d': 1 } }, { '': 1 },
    JSON.parse('{"__proto__":{"polluted":1}}') as unknown, { k: 'v\u0000' },
  ),
  fc.constantFrom(65, 200, 10_000).map((d) => nested(d, '{"a":', '}')),
  fc.constantFrom(65, 10_000).map((d) => nested(d, '[', ']')),
)

/** Values of every JSON type plus the shapes that break naive code. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null, true, false, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2,
    '', ' ', '\u0000', 'a\u0000b', '\ud800', '\u202e\u0645\u0631\u062d\u0628\u0627', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👩‍👩‍👧', '<script>alert(1)</script>',
    '../../etc/passwd', '{"$gt":""}', 'default', '0', 'true', 'null', '1e309', '-0', '%00', '__proto__',
    [], [null], [[[]]], {}, { $gt: '' }, { $where: '1' }, { 'a.b': 1 }, { $set: { x: 1 } },
    { 'a\u0000b': 1 }, { '\u0000': '\u0000' }, { '': 1 }, { __proto__: null, constructor: { prototype: { polluted: 1 } } },
    JSON.parse('{"__proto__":{"polluted":1}}') as unknown,
  ),
  fc.constantFrom(65, 100, 1000, 10_000).map((d) => nested(d, '{"a":', '}')),
  fc.constantFrom(65, 1000, 10_000).map((d) => nested(d, '[', ']')),
  fc.constantFrom(1000, 70_000, 300_000).map((n) => 'x'.repeat(n)),
  fc.string({ unit: 'binary', maxLength: 16 }),
  fc.string({ unit: 'grapheme', maxLength: 16 }),
  fc.integer(),
  fc.double(),
)

/** Object keys a document store or a JavaScript object may mishandle. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('a\u0000b', '\u0000', '$gt', '$where', 'a.b', '.', '', ' ', '__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', '\ud800', 'k'.repeat(5000), 'ключ', '🔑'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
)

/** Every place inside a value: [] is the value itself, otherwise a path of keys and indexes. */
export function slotsOf(value: unknown, depth = 0, at: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [at]
  if (depth >= 4 || value === null || typeof value !== 'object' || value instanceof RawJson) return out
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value)
  for (const [k, v] of entries) out.push(...slotsOf(v, depth + 1, [...at, k]))
  return out
}

function replaceAt(value: unknown, path: Array<string | number>, replacement: (old: unknown) => unknown): unknown {
  if (path.length === 0) return replacement(value)
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? replaceAt(v, rest, replacement) : v))
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) }
  Object.defineProperty(copy, head, { value: replaceAt(copy[head as string], rest, replacement), enumerable: true, writable: true, configurable: true })
  return copy
}

export type BodyMutation =
  | { kind: 'replace'; slot: number; value: unknown }
  | { kind: 'add-key'; slot: number; key: string; value: unknown }
  | { kind: 'drop-key'; slot: number }

export const bodyMutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), slot: fc.nat(), value: hostileValue }),
  fc.record({ kind: fc.constant('add-key' as const), slot: fc.nat(), key: hostileKey, value: hostileValue }),
  fc.record({ kind: fc.constant('drop-key' as const), slot: fc.nat() }),
)

/** Applies one mutation at a slot chosen modulo the number of slots, so any index lands somewhere. */
export function mutate(value: unknown, mutation: BodyMutation): unknown {
  const slots = slotsOf(value)
  const path = slots[mutation.slot % slots.length]
  switch (mutation.kind) {
    case 'replace': return replaceAt(value, path, () => mutation.value)
    case 'add-key': {
      const objects = slots.filter((p) => {
        const v = p.reduce<unknown>((node, k) => (node as Record<string | number, unknown>)[k], value)
        return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJson)
      })
      if (objects.length === 0) return replaceAt(value, [], () => ({ [mutation.key]: mutation.value }))
      const target = objects[mutation.slot % objects.length]
      return replaceAt(value, target, (old) => {
        const copy = { ...(old as Record<string, unknown>) }
        Object.defineProperty(copy, mutation.key, { value: mutation.value, enumerable: true, writable: true, configurable: true })
        return copy
      })
    }
    case 'drop-key': {
      if (path.length === 0) return value
      const parent = path.slice(0, -1)
      const last = path[path.length - 1]
      return replaceAt(value, parent, (old) => {
        if (Array.isArray(old)) return old.filter((_, i) => i !== last)
        const { [last as string]: _dropped, ...rest } = old as Record<string, unknown>
        return rest
      })
    }
  }
}

/** A whole body that is not an object, or not JSON at all. `raw` is sent as is. */
export const hostileBodyText: fc.Arbitrary<string> = fc.constantFrom(
  'null', '[]', '"s"', '0', 'true', '[{}]', '{', '{"a":1,}', '{"a":1}{"a":2}', "{'a':1}", 'NaN', '\u0000', '{"a":"\\ud800"}',
  '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}', ' ', '\ufeff{}',
)

/** Path segments: each is inserted in the URL as written (so percent-junk stays junk). */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '%zz', '%', '%00', '%2F', '..%2F..%2Fetc', '%2e%2e', '%E0%A4%A', '%C0%AF', '%ff', 'a%20b', '%0d%0aX-Injected:%201',
    'x'.repeat(257), 'x'.repeat(5000), '0', '-1', '1e309', 'null', 'undefined', '000000000000000000000000', 'ffffffffffffffffffffffff',
    '%24where', '%7B%22%24gt%22%3A%22%22%7D', 'default', '__proto__', 'constructor', 'DEFAULT', 'a.b', 'CON',
  ),
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
)

/** Query values sent in place of the documented ones. */
export const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', '%20', '0', '-1', '1.5', '1e309', '99999999999999999999', 'abc', 'true', 'null', '%00', '%zz', '__proto__', '%24gt', 'x'.repeat(5000), 'created_at', 'name', 'ASC', '[object Object]'),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
)
