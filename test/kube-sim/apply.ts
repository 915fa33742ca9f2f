import { ApiError } from './status.ts'
import { listKeys, sameKey } from './schema.ts'
import {
  changedBetween, coversOrBelow, describePath, encode, fieldSetOf, fromFieldsV1, has, isItem, lookup, minus, paths, removePath,
  toFieldsV1, type FieldSet,
} from './fieldset.ts'
import { clone, deepEqual, isObject, timestamp, type Json, type JsonObject, type KObject, type ManagedFieldsEntry } from './util.ts'

// Server-side apply and managed-fields bookkeeping. Simplified from structured-merge-diff but with the
// behaviour clients depend on: ownership per manager, shared ownership when values agree, 409 with
// per-field causes when they do not (unless force), and removal of fields an applier stops sending.

interface Entry { manager: string; operation: 'Apply' | 'Update'; apiVersion: string; subresource?: string; time?: string; set: FieldSet }

function readEntries(obj: KObject | undefined): Entry[] {
  return (obj?.metadata.managedFields ?? []).filter((e) => e && e.manager !== undefined).map((e) => ({
    manager: e.manager, operation: e.operation, apiVersion: e.apiVersion, subresource: e.subresource, time: e.time, set: fromFieldsV1(e.fieldsV1),
  }))
}

function writeEntries(entries: Entry[]): ManagedFieldsEntry[] {
  return entries.filter((e) => e.set.size > 0).map((e) => {
    const out: ManagedFieldsEntry = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion, time: e.time ?? timestamp(), fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(e.set) }
    if (e.subresource) out.subresource = e.subresource
    return out
  })
}

function sameEntry(e: Entry, manager: string, op: Entry['operation'], subresource?: string): boolean {
  return e.manager === manager && e.operation === op && (e.subresource ?? '') === (subresource ?? '')
}

/** Drops paths that no longer exist in the object from every manager's set. */
function pruneToObject(entries: Entry[], obj: JsonObject): void {
  for (const e of entries) for (const s of [...e.set]) if (!lookup(obj, JSON.parse(s)).found) e.set.delete(s)
}

export interface UpdateTracking { manager: string; apiVersion: string; subresource?: string }

/**
 * Records an ordinary write (create/update/patch): the writer takes ownership of the fields it changed,
 * which other managers lose. Clients may replace managedFields outright (`[{}]` clears them).
 */
export function trackUpdate(before: KObject | undefined, after: KObject, t: UpdateTracking): void {
  const incoming = after.metadata.managedFields
  if (incoming !== undefined && before && !deepEqual(incoming, before.metadata.managedFields)) {
    const kept = incoming.filter((e) => isObject(e) && e.manager !== undefined)
    after.metadata.managedFields = kept.length ? kept : undefined
    if (!kept.length) delete after.metadata.managedFields
    return
  }
  const entries = readEntries(before)
  const scope = t.subresource === 'status' ? { onlyStatus: true } : { skipStatus: true }
  const changed = changedBetween(before, after, fieldSetOf(after, before ? scope : {}))
  if (changed.size) {
    for (const e of entries) for (const c of changed) e.set.delete(c)
    let mine = entries.find((e) => sameEntry(e, t.manager, 'Update', t.subresource))
    if (!mine) { mine = { manager: t.manager, operation: 'Update', apiVersion: t.apiVersion, subresource: t.subresource, set: new Set() }; entries.push(mine) }
    for (const c of changed) mine.set.add(c)
    mine.time = timestamp()
    mine.apiVersion = t.apiVersion
  }
  pruneToObject(entries, after)
  const out = writeEntries(entries)
  if (out.length) after.metadata.managedFields = out
  else delete after.metadata.managedFields
}

export interface ApplyOptions { manager: string; apiVersion: string; force: boolean; subresource?: string; hasStatusSubresource: boolean }

/** Merges an applied configuration into the live object (maps recursively, keyed lists by key). */
function mergeApplied(live: Json, applied: Json, field?: string): Json {
  if (isObject(applied) && isObject(live)) {
    const out: JsonObject = { ...live }
    for (const [k, v] of Object.entries(applied)) {
      if (v === null) delete out[k]
      else out[k] = mergeApplied(live[k], v, k)
    }
    return out
  }
  if (Array.isArray(applied) && Array.isArray(live)) {
    const keys = listKeys(field, applied)
    if (keys && listKeys(field, live)) {
      const out = live.map((x) => x)
      for (const item of applied) {
        const i = out.findIndex((x) => sameKey(x, item, keys))
        if (i >= 0) out[i] = mergeApplied(out[i], item)
        else out.push(clone(item))
      }
      return out
    }
  }
  return clone(applied)
}

function withoutNulls(v: Json): Json {
  if (Array.isArray(v)) return v.map(withoutNulls)
  if (!isObject(v)) return v
  const out: JsonObject = {}
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x)
  return out
}

/**
 * Server-side apply of `applied` onto `live` (undefined when the object does not exist yet).
 * Returns the new object with managedFields updated; throws a 409 listing every conflicting field.
 */
export function serverSideApply(live: KObject | undefined, applied: KObject, o: ApplyOptions): KObject {
  const scope = o.subresource === 'status' ? { onlyStatus: true } : o.hasStatusSubresource ? { skipStatus: true } : {}
  const cfg = clone(applied)
  if (o.subresource !== 'status' && o.hasStatusSubresource) delete cfg.status
  const mine = fieldSetOf(cfg, scope)
  const entries = readEntries(live)
  const now = timestamp()

  if (!live) {
    const created = withoutNulls(cfg) as KObject
    created.metadata = { ...created.metadata }
    created.metadata.managedFields = writeEntries([{ manager: o.manager, operation: 'Apply', apiVersion: o.apiVersion, subresource: o.subresource, time: now, set: mine }])
    return created
  }

  const conflicts: { manager: string; apiVersion: string; path: string[] }[] = []
  for (const e of entries) {
    if (sameEntry(e, o.manager, 'Apply', o.subresource)) continue
    for (const s of e.set) {
      if (!mine.has(s)) continue
      const p = JSON.parse(s) as string[]
      if (isItem(p)) continue
      if (!deepEqual(lookup(live, p).value, lookup(cfg, p).value)) conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, path: p })
    }
  }
  if (conflicts.length && !o.force) {
    const causes = conflicts.map((c) => ({ type: 'FieldManagerConflict', reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${c.apiVersion}`, field: describePath(c.path) }))
    const byManager = new Map<string, string[]>()
    for (const c of conflicts) {
      const k = `"${c.manager}" using ${c.apiVersion}`
      byManager.set(k, [...(byManager.get(k) ?? []), describePath(c.path)])
    }
    const msg = conflicts.length === 1
      ? `Apply failed with 1 conflict: conflict with "${conflicts[0].manager}" using ${conflicts[0].apiVersion}: ${describePath(conflicts[0].path)}`
      : `Apply failed with ${conflicts.length} conflicts: ${[...byManager].map(([k, ps]) => `conflicts with ${k}:\n${ps.map((x) => `- ${x}`).join('\n')}`).join('\n')}`
    throw new ApiError(409, msg, 'Conflict', { causes })
  }
  for (const c of conflicts) for (const e of entries) if (e.manager === c.manager) e.set.delete(encode(c.path))

  const merged = mergeApplied(live, cfg) as KObject
  merged.metadata = { ...merged.metadata, managedFields: live.metadata.managedFields }

  // Fields this manager applied before but omits now are removed unless someone else still owns them.
  const prev = entries.find((e) => sameEntry(e, o.manager, 'Apply', o.subresource))
  if (prev) {
    const others = new Set<string>()
    for (const e of entries) if (e !== prev) for (const s of e.set) others.add(s)
    // Outermost first, and nothing below a path already removed: removing a list item's key field (`port`)
    // first would leave the item no longer findable by its key, so half of it would stay behind.
    const removed = paths(minus(prev.set, mine)).sort((a, b) => a.length - b.length)
    const gone: string[][] = []
    for (const p of removed) {
      if (gone.some((g) => g.length <= p.length && g.every((pe, i) => p[i] === pe))) continue
      if (has(others, p) || coversOrBelow(others, p) || has(mine, p) || coversOrBelow(mine, p)) continue
      removePath(merged, p)
      gone.push(p)
    }
  }

  let entry = prev
  if (!entry) { entry = { manager: o.manager, operation: 'Apply', apiVersion: o.apiVersion, subresource: o.subresource, set: mine }; entries.push(entry) }
  entry.set = mine
  entry.time = now
  entry.apiVersion = o.apiVersion
  pruneToObject(entries, merged)
  merged.metadata.managedFields = writeEntries(entries)
  if (!merged.metadata.managedFields.length) delete merged.metadata.managedFields
  return merged
}
