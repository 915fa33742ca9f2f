// A compose file's text → its services as plain data: parsed with size and alias limits, interpolated,
// validated against the Compose Specification schema, `extends` resolved (within the file, or from
// another file of the repository when its content is given) and profiles applied.
import { posix } from 'node:path'
import { isMap, isScalar, LineCounter, parseDocument, visit, type Document } from 'yaml'
import { MAX_COMPOSE_BYTES } from '../../../schemas/import-analysis.ts'
import { validateCompose } from './compose-schema.ts'
import { ImportError, ImportTooLarge } from './errors.ts'
import { interpolate, type ExpansionBudget, type Lookup } from './interpolate.ts'
import { isSensitiveName } from './names.ts'
import type { AnalysisIssue } from '../../../schemas/import-analysis.ts'

/** Alias expansions a file may make: real files use a few anchors; a YAML bomb needs thousands. */
export const MAX_YAML_ALIASES = 200
/** Services a file may define (after extends); the analysis is sized for it. */
export const MAX_SERVICES = 1000
const MAX_EXTENDS_DEPTH = 10

export type Raw = Record<string, any>

export interface Loaded {
  name?: string
  services: Map<string, Raw>
  volumes: Raw
  secrets: Raw
  configs: Raw
  networks: Raw
  /** Values built from sensitive variables: kept secret wherever they land. */
  taintedValues: Set<string>
  /** Sensitive variables that were written as $(NAME) into commands and probes (Kubernetes expands them from the container's environment). */
  sensitiveRefs: Set<string>
}

export interface LoadContext {
  lookup: Lookup
  files?: ReadonlyMap<string, string>
  warn: (issue: AnalysisIssue) => void
  taintedValues: Set<string>
  sensitiveRefs: Set<string>
  /** Bounds what interpolation may add over the whole analysis. */
  budget: ExpansionBudget
}

// Keys whose value Compose casts back to a number or boolean after interpolation ("${REPLICAS}" → 3).
const NUMERIC_KEYS = new Set(['replicas', 'scale', 'retries', 'target', 'published', 'mode', 'cpu_count', 'cpu_percent', 'cpu_shares', 'cpu_quota', 'cpu_period', 'cpu_rt_period', 'cpu_rt_runtime', 'pids_limit', 'oom_score_adj', 'mem_swappiness', 'weight', 'priority', 'soft', 'hard', 'parallelism', 'max_failure_ratio', 'max_attempts'])
const BOOLEAN_KEYS = new Set(['privileged', 'read_only', 'tty', 'stdin_open', 'init', 'oom_kill_disable', 'disable', 'external', 'nocopy', 'create_host_path', 'attach', 'required', 'restart', 'no_cache', 'pull', 'attachable', 'internal', 'enable_ipv6'])
// Where a sensitive variable is written as $(NAME) instead of its value (Kubernetes expands it at start).
const REFERENCE_KEYS = new Set(['command', 'entrypoint', 'healthcheck'])

function where(path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${p}`)).join('')
}

/**
 * The offset of the first key that repeats an earlier key of its mapping, or -1. The yaml library's own check
 * (uniqueKeys) compares each key with every earlier one: quadratic, so a mapping of 20,000 keys held a thread
 * for seconds. A set per mapping is linear. Keys compare as that check compares them: by scalar value.
 */
function duplicateKeyAt(doc: Document): number {
  let at = -1
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>()
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue
        if (seen.has(pair.key.value)) { at = pair.key.range?.[0] ?? 0; return visit.BREAK }
        seen.add(pair.key.value)
      }
      return undefined
    },
  })
  return at
}

export function parseYaml(content: string, what: string): unknown {
  const bytes = Buffer.byteLength(content, 'utf8')
  if (bytes > MAX_COMPOSE_BYTES) throw new ImportTooLarge(`${what} is ${bytes} bytes; at most ${MAX_COMPOSE_BYTES} are accepted`)
  const lines = new LineCounter()
  const doc = parseDocument(content, { uniqueKeys: false, merge: true, prettyErrors: true, lineCounter: lines, maxAliasCount: MAX_YAML_ALIASES } as Parameters<typeof parseDocument>[1])
  if (doc.errors.length > 0) {
    const e = doc.errors[0]
    const line = e.linePos?.[0]
    throw new ImportError(`${what} is not valid YAML${line ? ` (line ${line.line}, column ${line.col})` : ''}: ${e.code.toLowerCase().replace(/_/g, ' ')}`)
  }
  const duplicate = duplicateKeyAt(doc)
  if (duplicate >= 0) {
    const line = lines.linePos(duplicate)
    throw new ImportError(`${what} is not valid YAML (line ${line.line}, column ${line.col}): duplicate key`)
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES })
  } catch (err) {
    if (err instanceof ReferenceError || /alias/i.test((err as Error).message)) throw new ImportError(`${what} expands YAML aliases more than ${MAX_YAML_ALIASES} times; refused`)
    throw new ImportError(`${what} could not be read as YAML`)
  }
}

function interpolateTree(node: unknown, path: Array<string | number>, ctx: LoadContext): unknown {
  if (typeof node === 'string') {
    const reference = path[0] === 'services' && REFERENCE_KEYS.has(String(path[2]))
    const r = interpolate(node, ctx.lookup, where(path), reference
      ? { budget: ctx.budget, substitute: (name) => { if (!isSensitiveName(name)) return undefined; ctx.sensitiveRefs.add(name); return `$(${name})` } }
      : { budget: ctx.budget })
    if (r.used.some(isSensitiveName)) ctx.taintedValues.add(r.value)
    if (r.value !== node && r.used.length + (node.includes('$') ? 1 : 0) > 0) {
      const key = String(path.at(-1))
      if (NUMERIC_KEYS.has(key) && /^-?\d+(\.\d+)?$/.test(r.value.trim())) return Number(r.value)
      if (BOOLEAN_KEYS.has(key) && /^(true|false)$/i.test(r.value.trim())) return r.value.trim().toLowerCase() === 'true'
    }
    return r.value
  }
  if (Array.isArray(node)) return node.map((v, i) => interpolateTree(v, [...path, i], ctx))
  if (node && typeof node === 'object') {
    const out: Raw = {}
    for (const [k, v] of Object.entries(node)) out[k] = interpolateTree(v, [...path, k], ctx)
    return out
  }
  return node
}

interface ParsedFile { doc: Raw; dir: string }

function parseComposeFile(content: string, what: string, dir: string, ctx: LoadContext): ParsedFile {
  const parsed = parseYaml(content, what)
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ImportError(`${what} is not a compose file: its top level is not a mapping`)
  const raw = parsed as Raw
  if (!('services' in raw) && !('include' in raw)) throw new ImportError(`${what} is not a compose file: it has no services`)
  // The cheap limit before the costly work: interpolating and validating a file that is refused anyway
  // would hold a thread for a second.
  const services = raw.services && typeof raw.services === 'object' ? Object.keys(raw.services).length : 0
  if (services > MAX_SERVICES) throw new ImportError(`${what} defines ${services} services; at most ${MAX_SERVICES} are accepted`)
  const doc = interpolateTree(raw, [], ctx) as Raw
  validateCompose(doc)
  return { doc, dir }
}

// --- extends ------------------------------------------------------------------------------------------

/** list-or-dict keys normalized to mappings so that a base and an extension merge key by key. */
const MAPPING_KEYS = ['environment', 'labels', 'annotations', 'extra_hosts', 'sysctls']

function listOrDict(v: unknown, sep = '='): Raw {
  if (!Array.isArray(v)) return (v ?? {}) as Raw
  const out: Raw = {}
  for (const entry of v) {
    const s = String(entry)
    const at = s.indexOf(sep)
    if (at < 0) out[s] = null
    else out[s.slice(0, at)] = s.slice(at + 1)
  }
  return out
}

export function normalizeService(svc: Raw): Raw {
  const out: Raw = { ...svc }
  for (const k of MAPPING_KEYS) if (k in out) out[k] = listOrDict(out[k], k === 'extra_hosts' ? ':' : '=')
  if (Array.isArray(out.depends_on)) out.depends_on = Object.fromEntries(out.depends_on.map((d: string) => [d, { condition: 'service_started' }]))
  if (out.build && typeof out.build === 'object' && out.build.args !== undefined) out.build = { ...out.build, args: listOrDict(out.build.args) }
  return out
}

const REPLACED = new Set(['command', 'entrypoint', 'test', 'image', 'build'])

function volumeTarget(v: unknown): string {
  if (v && typeof v === 'object') return String((v as Raw).target ?? '')
  const parts = String(v).split(':')
  return parts.length >= 2 ? parts[1] : parts[0]
}

function merge(base: unknown, local: unknown, key: string): unknown {
  if (local === undefined) return base
  if (base === undefined || REPLACED.has(key)) return local
  if (Array.isArray(base) && Array.isArray(local)) {
    if (key === 'volumes' || key === 'devices') {
      const targets = new Set(local.map(volumeTarget))
      return [...base.filter((v) => !targets.has(volumeTarget(v))), ...local]
    }
    const seen = new Set(local.map((v) => JSON.stringify(v)))
    return [...base.filter((v) => !seen.has(JSON.stringify(v))), ...local]
  }
  if (base && local && typeof base === 'object' && typeof local === 'object' && !Array.isArray(base) && !Array.isArray(local)) {
    const out: Raw = { ...(base as Raw) }
    for (const [k, v] of Object.entries(local as Raw)) out[k] = merge(out[k], v, k)
    return out
  }
  return local
}

export function loadCompose(content: string, baseDir: string, ctx: LoadContext): Loaded {
  const main = parseComposeFile(content, 'the compose file', baseDir, ctx)
  const others = new Map<string, ParsedFile | null>()
  const resolved = new Map<string, Raw>() // key: file path + \0 + service

  const fileOf = (from: ParsedFile, file: string, service: string): ParsedFile | null => {
    const path = posix.normalize(posix.join(from.dir || '.', file))
    if (!others.has(path)) {
      const text = ctx.files?.get(path) ?? ctx.files?.get(`./${path}`)
      if (text === undefined) {
        ctx.warn({ service, key: 'extends', message: `extends names the file ${JSON.stringify(file.slice(0, 200))}, which is not available here; what it would inherit is missing` })
        others.set(path, null)
      } else {
        others.set(path, parseComposeFile(text, path, posix.dirname(path), ctx))
      }
    }
    return others.get(path) ?? null
  }

  const resolve = (file: ParsedFile, name: string, stack: string[]): Raw => {
    const id = `${file === main ? '' : file.dir}\0${name}`
    const done = resolved.get(id)
    if (done) return done
    if (stack.includes(id)) throw new ImportError(`services.${name}.extends: a cycle (${[...stack, id].map((s) => s.split('\0')[1]).join(' → ')})`)
    if (stack.length > MAX_EXTENDS_DEPTH) throw new ImportError(`services.${name}.extends: more than ${MAX_EXTENDS_DEPTH} levels`)
    const own = file.doc.services?.[name]
    if (own === undefined) throw new ImportError(`extends: no service ${JSON.stringify(name.slice(0, 100))}${file === main ? '' : ` in ${file.dir}`}`)
    const svc = normalizeService((own ?? {}) as Raw)
    const ext = svc.extends
    delete svc.extends
    let result = svc
    if (ext !== undefined) {
      const spec = typeof ext === 'string' ? { service: ext } : ext as { service: string; file?: string }
      const source = spec.file !== undefined ? fileOf(file, spec.file, name) : file
      if (source) {
        const base = resolve(source, spec.service, [...stack, id])
        result = merge(base, svc, '') as Raw
      }
    }
    resolved.set(id, result)
    return result
  }

  const names = Object.keys(main.doc.services ?? {}).sort()
  if (names.length > MAX_SERVICES) throw new ImportError(`the compose file defines ${names.length} services; at most ${MAX_SERVICES} are accepted`)
  if (main.doc.include !== undefined) ctx.warn({ key: 'include', message: 'include is not followed: the included files\' services are not imported (import them separately)' })
  const services = new Map<string, Raw>()
  for (const name of names) services.set(name, resolve(main, name, []))
  return {
    ...(typeof main.doc.name === 'string' && { name: main.doc.name }),
    services,
    volumes: (main.doc.volumes ?? {}) as Raw,
    secrets: (main.doc.secrets ?? {}) as Raw,
    configs: (main.doc.configs ?? {}) as Raw,
    networks: (main.doc.networks ?? {}) as Raw,
    taintedValues: ctx.taintedValues,
    sensitiveRefs: ctx.sensitiveRefs,
  }
}
