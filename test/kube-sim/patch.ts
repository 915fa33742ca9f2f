import { badRequest, ApiError } from './status.ts'
import { listKeys, primitiveSetFields, sameKey } from './schema.ts'
import { clone, deepEqual, isObject, type Json, type JsonObject } from './util.ts'

// ---- RFC 6902 JSON Patch -------------------------------------------------------------------------

function parsePointer(p: string): string[] {
  if (p === '') return []
  if (!p.startsWith('/')) throw badRequest(`invalid JSON pointer: ${p}`)
  return p.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

function parentOf(doc: Json, path: string[]): { parent: Json; last: string } {
  let cur = doc
  for (const seg of path.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(seg)]
    else if (isObject(cur)) cur = cur[seg]
    else cur = undefined
    if (cur === undefined) throw new ApiError(422, `the server rejected our request due to an error in our request: doc is missing path: /${path.join('/')}`, 'Invalid')
  }
  return { parent: cur, last: path[path.length - 1] }
}

function getAt(doc: Json, path: string[]): Json {
  let cur = doc
  for (const seg of path) {
    if (Array.isArray(cur)) cur = cur[Number(seg)]
    else if (isObject(cur)) cur = cur[seg]
    else return undefined
  }
  return cur
}

function missing(path: string[], op: string): ApiError {
  return new ApiError(422, `the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "/${path.join('/')}"`, 'Invalid')
}

export function applyJsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('json patch must be an array of operations')
  let doc = clone(target)
  const add = (path: string[], value: Json) => {
    if (!path.length) { doc = clone(value); return }
    const { parent, last } = parentOf(doc, path)
    if (Array.isArray(parent)) {
      const i = last === '-' ? parent.length : Number(last)
      if (!(i >= 0 && i <= parent.length)) throw missing(path, 'add')
      parent.splice(i, 0, clone(value))
    } else if (isObject(parent)) parent[last] = clone(value)
    else throw missing(path, 'add')
  }
  const remove = (path: string[]): Json => {
    const { parent, last } = parentOf(doc, path)
    if (Array.isArray(parent)) {
      const i = Number(last)
      if (!(i >= 0 && i < parent.length)) throw missing(path, 'remove')
      return parent.splice(i, 1)[0]
    }
    if (!isObject(parent) || !(last in parent)) throw missing(path, 'remove')
    const v = parent[last]
    delete parent[last]
    return v
  }
  for (const op of ops as JsonObject[]) {
    const path = parsePointer(String(op.path ?? ''))
    switch (op.op) {
      case 'add': add(path, op.value); break
      case 'remove': remove(path); break
      case 'replace': {
        if (getAt(doc, path) === undefined) throw missing(path, 'replace')
        if (!path.length) { doc = clone(op.value); break }
        const { parent, last } = parentOf(doc, path)
        if (Array.isArray(parent)) parent[Number(last)] = clone(op.value)
        else parent[last] = clone(op.value)
        break
      }
      case 'move': { const v = remove(parsePointer(String(op.from))); add(path, v); break }
      case 'copy': { const v = getAt(doc, parsePointer(String(op.from))); if (v === undefined) throw missing(path, 'copy'); add(path, v); break }
      case 'test':
        if (!deepEqual(getAt(doc, path), op.value)) throw new ApiError(422, `the server rejected our request due to an error in our request: testing value /${path.join('/')} failed`, 'Invalid')
        break
      default: throw badRequest(`Unexpected kind: ${String(op.op)}`)
    }
  }
  return doc
}

// ---- RFC 7386 JSON Merge Patch -------------------------------------------------------------------

export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return clone(patch)
  const out: JsonObject = isObject(target) ? clone(target) : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = applyMergePatch(out[k], v)
  }
  return out
}

// ---- Strategic merge patch -----------------------------------------------------------------------
// Like merge patch, except lists with a patch merge key merge item by item, `$patch: delete|replace`
// directives, `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and `$retainKeys`.

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.filter((i) => !(isObject(i) && i.$patch)).map(stripDirectives)
  if (!isObject(v)) return v
  const out: JsonObject = {}
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x)
  return out
}

export function applyStrategicMergePatch(target: Json, patch: Json): Json {
  return smpMap(isObject(target) ? clone(target) : {}, patch)
}

function smpMap(orig: JsonObject, patch: Json): JsonObject {
  if (!isObject(patch)) throw badRequest('strategic merge patch must be a JSON object')
  if (patch.$patch === 'replace') return stripDirectives(patch)
  if (patch.$patch === 'delete') return {}
  const retain = patch.$retainKeys as string[] | undefined
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys') continue
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const f = k.slice('$deleteFromPrimitiveList/'.length)
      if (Array.isArray(orig[f])) orig[f] = (orig[f] as Json[]).filter((x) => !(v as Json[]).includes(x))
      continue
    }
    if (k.startsWith('$setElementOrder/')) continue
    if (v === null) { delete orig[k]; continue }
    const cur = orig[k]
    if (isObject(v)) {
      if (v.$patch === 'delete') { delete orig[k]; continue }
      orig[k] = isObject(cur) ? smpMap(cur, v) : stripDirectives(v)
    } else if (Array.isArray(v)) {
      orig[k] = smpList(k, Array.isArray(cur) ? cur : undefined, v)
    } else orig[k] = v
  }
  for (const k of Object.keys(patch)) {
    if (!k.startsWith('$setElementOrder/')) continue
    const f = k.slice('$setElementOrder/'.length)
    if (Array.isArray(orig[f])) orig[f] = reorder(f, orig[f], patch[k] as Json[])
  }
  if (retain) for (const k of Object.keys(orig)) if (!retain.includes(k)) delete orig[k]
  return orig
}

function smpList(field: string, cur: Json[] | undefined, patch: Json[]): Json[] {
  if (patch.some((i) => isObject(i) && i.$patch === 'replace')) return stripDirectives(patch.filter((i) => !(isObject(i) && i.$patch === 'replace')))
  if (!cur) return stripDirectives(patch)
  if (primitiveSetFields.has(field)) return [...cur, ...patch.filter((x) => !cur.includes(x))]
  const keys = listKeys(field, [...cur, ...patch.filter((i) => !(isObject(i) && i.$patch === 'delete' && Object.keys(i).length === 1))])
  if (!keys) return stripDirectives(patch)
  const out = cur.map((x) => x)
  for (const item of patch) {
    const idx = out.findIndex((x) => sameKey(x, item, [keys[0]]))
    if (isObject(item) && item.$patch === 'delete') { if (idx >= 0) out.splice(idx, 1); continue }
    if (idx >= 0) out[idx] = smpMap(out[idx], item)
    else out.push(stripDirectives(item))
  }
  return out
}

function reorder(field: string, list: Json[], order: Json[]): Json[] {
  const keys = listKeys(field, list)
  if (!keys) return list
  const pos = (x: Json) => { const i = order.findIndex((o) => sameKey(o, x, [keys[0]])); return i < 0 ? order.length : i }
  return [...list].sort((a, b) => pos(a) - pos(b))
}
