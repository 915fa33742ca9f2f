// Fastify's response serializers (fast-json-stringify, compiled per route and status from the response
// schema), each remembering its output for snapshots: values a read cache holds deep-frozen (see
// src/repositories/snapshot.ts), whose content cannot change while they live. Serializing is a pure
// function of the value, so the remembered string is exactly what serializing again would produce; it is
// kept in a WeakMap, so it goes when the cache lets the snapshot go (a write drops the entry). A cached
// GET /workflows/:id is then answered without walking the workflow at all.
import { createRequire } from 'node:module'
import type { SerializerFactory } from '@fastify/fast-json-stringify-compiler'
import { isSnapshot } from './repositories/snapshot.ts'

type Serialize = (data: unknown) => string

// The compiler Fastify itself uses (the copy it depends on), so the serializers are exactly its own.
const require = createRequire(import.meta.url)
const SerializerSelector = createRequire(require.resolve('fastify'))('@fastify/fast-json-stringify-compiler') as () => SerializerFactory

/** Serializes like `serialize`, remembering the result for each snapshot it is given. */
export function rememberingSnapshots(serialize: Serialize): Serialize {
  const remembered = new WeakMap<object, string>()
  return (data) => {
    if (!isSnapshot(data)) return serialize(data)
    let json = remembered.get(data as object)
    if (json === undefined) remembered.set(data as object, json = serialize(data))
    return json
  }
}

/** The `schemaController.compilersFactory.buildSerializer` server option: Fastify's own, remembering snapshots. */
export function buildReplySerializer(): SerializerFactory {
  const build = SerializerSelector()
  return (externalSchemas, serializerOpts) => {
    const compile = build(externalSchemas, serializerOpts)
    return (route) => rememberingSnapshots(compile(route))
  }
}
