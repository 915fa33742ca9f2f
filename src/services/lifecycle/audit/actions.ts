// What an audit entry calls a request: its action (`workflow.run`, `cluster.share`) and its target
// (`workflow` + the id in the path). Derived, never listed by hand, so a route added later is named the
// day it is added:
// - the action's noun is the route group (the first path segment under the API root, `admin` skipped),
//   singular; its verb is the route's OpenAPI operationId without that noun, in snake case:
//   runWorkflow → workflow.run, updateClusterCredentials → cluster.update_credentials,
//   markAllNotificationsRead → notification.mark_all_read, createWorkflowFromImport → import.create_workflow;
// - a KubeOrch adapter route (no operationId, API.md §10) takes the action of the canonical route with the
//   same method and path under /v1/api; one without a canonical twin is named from its path
//   (POST /workflows/:id/run → workflow.run, PUT /x/:id → x.update, POST /alerts/rules → alert.create_rule);
// - the target is the first path parameter and the collection segment before it, singular
//   (/clusters/:name/share/:user_id → cluster + the name); a `user_id` parameter after it is the subject;
// - a route's `config.audit` overrides any of it (`{action}`), or leaves the route out (`{skip: true}`).

export interface AuditRouteConfig {
  /** The action to record instead of the derived one. */
  action?: string
  /** Not recorded by the request hook (the route records itself, or changes nothing). */
  skip?: boolean
}

export interface RouteNaming {
  action: string
  target_type: string | null
  /** The path parameter holding the target's id, if any. */
  target_param: string | null
  /** The path parameter naming another user the change is about (a share's grantee). */
  subject_param: string | null
}

export const API_ROOT = '/v1/api'
export const ADAPTER_ROOT = '/kubeorch/v1/api'

// Words that read as the tail of a phrase once the noun after them is gone (createWorkflowFromImport).
const DANGLING = new Set(['from', 'to', 'for', 'of', 'by', 'in', 'on', 'with'])
// Groups whose plural reads as the name of the thing (a user's settings, a software import).
const KEEP_AS_IS = new Set(['settings', 'status', 'import', 'auth', 'profile', 'audit', 'search', 'metrics'])

export function singular(word: string): string {
  if (KEEP_AS_IS.has(word)) return word
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1)
  return word
}

const snake = (word: string) => word.replace(/-/g, '_').toLowerCase()

/** operationId → words: splits at each lower-to-upper step only, so `exchangeOAuthCode` keeps `OAuth` whole. */
function words(operationId: string): string[] {
  return operationId.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(' ').map((w) => w.toLowerCase())
}

/** Which API root a route pattern is under, and its path below it. */
export function splitRoot(url: string): { root: string; rest: string } | null {
  for (const root of [ADAPTER_ROOT, API_ROOT]) {
    if (url === root || url.startsWith(`${root}/`)) return { root, rest: url.slice(root.length) }
  }
  return null
}

const segmentsOf = (rest: string) => rest.split('/').filter(Boolean)
const isParam = (segment: string) => segment.startsWith(':')

/** The route group: the first segment under the root, past `admin`. */
function groupOf(segments: string[]): string | null {
  const list = segments[0] === 'admin' ? segments.slice(1) : segments
  return list[0] && !isParam(list[0]) ? list[0] : null
}

/** A verb from an operationId: the words without the group's noun (first match), without a dangling tail. */
export function verbFromOperationId(operationId: string, noun: string): string {
  const list = words(operationId)
  const forms = new Set([noun, `${noun}s`, noun.replace(/y$/, 'ies'), singular(noun)])
  const at = list.findIndex((w, i) => i > 0 && forms.has(w))
  const kept = at === -1 ? list : [...list.slice(0, at), ...list.slice(at + 1)]
  while (kept.length > 1 && DANGLING.has(kept[kept.length - 1])) kept.pop()
  return kept.join('_')
}

const METHOD_VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' }

/** A plural noun (a collection in a path), as opposed to an action word (`sync`, `test-fire`, `status`). */
const isCollection = (segment: string) => !segment.includes('-') && segment.endsWith('s') && !segment.endsWith('ss') && !KEEP_AS_IS.has(segment)

/**
 * A verb from the path alone. A path ending in an action word takes it, followed by the collections before
 * it (PATCH /alerts/events/:id/acknowledge → acknowledge_event); a path ending in a collection or an id
 * takes the method's verb (POST /alerts/rules → create_rule, DELETE /clusters/:id/share/:user_id → delete_share).
 */
function verbFromPath(method: string, segments: string[]): string {
  const list = (segments[0] === 'admin' ? segments.slice(1) : segments).slice(1)
  const statics = list.filter((s) => !isParam(s))
  const last = list[list.length - 1]
  const objects = (words: string[]) => words.map((w) => singular(snake(w)))
  if (last === undefined || isParam(last) || isCollection(last)) return [METHOD_VERBS[method] ?? method.toLowerCase(), ...objects(statics)].join('_')
  return [snake(last), ...objects(statics.slice(0, -1))].join('_')
}

/** The target and subject parameters of a route pattern (see the head comment). */
function targetOf(segments: string[]): Pick<RouteNaming, 'target_type' | 'target_param' | 'subject_param'> {
  const first = segments.findIndex(isParam)
  const group = groupOf(segments)
  if (first === -1) return { target_type: group && singular(group), target_param: null, subject_param: null }
  const before = first > 0 ? segments[first - 1] : group
  const subject = segments.slice(first + 1).find((s) => s === ':user_id')
  return { target_type: before ? singular(snake(before)) : null, target_param: segments[first].slice(1), subject_param: subject ? 'user_id' : null }
}

/** Names a route: from its operationId when it has one, else from its path. */
export function nameRoute(method: string, url: string, operationId?: string, override?: AuditRouteConfig): RouteNaming | null {
  const split = splitRoot(url)
  if (!split) return null
  const segments = segmentsOf(split.rest)
  const group = groupOf(segments)
  const noun = group ? singular(snake(group)) : 'api'
  const verb = operationId ? verbFromOperationId(operationId, noun) : verbFromPath(method, segments)
  return { action: override?.action ?? `${noun}.${verb}`, ...targetOf(segments) }
}

/** The key under which an adapter route finds its canonical twin: method and path with parameters unnamed. */
export function canonicalKey(method: string, url: string): string | null {
  const split = splitRoot(url)
  if (!split) return null
  return `${method} ${segmentsOf(split.rest).map((s) => (isParam(s) ? ':' : s)).join('/')}`
}
