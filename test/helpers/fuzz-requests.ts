// Turns one OpenAPI operation into an arbitrary of requests: who calls (anonymous, a plain user, an admin,
// a forged token), which path parameters (real records of either user, missing ones, hostile segments),
// which query parameters (documented values, hostile ones, none) and which body (valid by the schema,
// valid with one hostile mutation, not an object or not JSON, or none). Plans are plain data, so a
// shrunk counterexample prints as the request that was sent.
import fc from 'fast-check'
import { arbitraryFor, type JsonSchema, type SchemaContext } from './fuzz-schema.ts'
import { bodyMutation, hostileBodyText, hostileQueryValue, hostileSegment, mutate, serializeBody, type BodyMutation } from './fuzz-mutations.ts'

export interface Operation {
  method: string
  path: string
  op: {
    parameters?: Array<{ in: string; name: string; required?: boolean; schema?: JsonSchema }>
    requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> }
    responses?: Record<string, unknown>
    security?: unknown[]
  }
}

/** `forged`: alg none; `tampered`: a user's token with admin claims; `wrong-key`: HS256 with another key. */
export type Role = 'anonymous' | 'user' | 'admin' | 'forged' | 'tampered' | 'wrong-key'

/** Values path parameters can take that name real records; the plan picks one by index. Keys are
 * `<segment before>/<param>`, optionally `@<role>` for a role's own view (its records first). Pools of
 * nested records are aligned: index i of `runs/runId` is a run of index i of `workflows/id`. */
export type PathPools = Record<string, string[]>

type PathChoice = { pick: number } | { segment: string }
type QueryChoice = { omit: true } | { valid: unknown } | { hostile: string }
export type BodyPlan =
  | { none: true }
  | { json: unknown; mutation?: BodyMutation }
  | { text: string }

export interface RequestPlan {
  role: Role
  path: Record<string, PathChoice>
  query: Record<string, QueryChoice>
  extraQuery?: string
  body: BodyPlan
  contentType: string
}

export interface BuiltRequest {
  method: string
  url: string
  headers: Record<string, string>
  payload?: string
}

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/json; charset=latin1', '']

/** Lists the operations of a document (every method of every path, except the docs' own assets). */
export function operationsOf(doc: JsonSchema): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Operation['op']>>)) {
    if (path.startsWith('/docs')) continue
    for (const [method, op] of Object.entries(item)) {
      // An SSE stream stays open until its client leaves, which inject never does: test/streams drives
      // them over real HTTP instead.
      if ((op.responses?.['200'] as { content?: Record<string, unknown> } | undefined)?.content?.['text/event-stream']) continue
      if (['get', 'put', 'post', 'delete', 'patch'].includes(method)) out.push({ method: method.toUpperCase(), path, op })
    }
  }
  return out
}

export function requestBodySchema(operation: Operation): JsonSchema | undefined {
  const content = operation.op.requestBody?.content
  return content?.['application/json']?.schema ?? Object.values(content ?? {})[0]?.schema
}

export function planArbitrary(operation: Operation, ctx: SchemaContext): fc.Arbitrary<RequestPlan> {
  // Signed-in callers get most of the runs: anonymous and forged calls end at the auth check.
  const role = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom<Role>('admin', 'user') },
    { weight: 1, arbitrary: fc.constantFrom<Role>('anonymous', 'forged', 'tampered', 'wrong-key') },
  )
  const pathParams = (operation.op.parameters ?? []).filter((p) => p.in === 'path')
  const queryParams = (operation.op.parameters ?? []).filter((p) => p.in === 'query')
  const independent = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, fc.oneof(
    { weight: 4, arbitrary: fc.record({ pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ segment: hostileSegment }) },
  )])) as Record<string, fc.Arbitrary<PathChoice>>)
  // Pools are aligned by index (a workflow and its run at the same place), so one pick for every
  // parameter names records that belong together, and the handler gets past its 404.
  const together = fc.nat({ max: 7 }).map((pick) => Object.fromEntries(pathParams.map((p) => [p.name, { pick }])) as Record<string, PathChoice>)
  const path = pathParams.length > 1 ? fc.oneof({ weight: 1, arbitrary: independent }, { weight: 1, arbitrary: together }) : independent
  // Mostly documented values (or none), and now and then one parameter replaced by a hostile value, so
  // a request is usually wrong in at most one way and the handler behind validation is reached too.
  const validQuery = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, fc.oneof(
    { weight: 1, arbitrary: fc.constant({ omit: true as const }) },
    { weight: p.required ? 8 : 2, arbitrary: (ctx.hint?.(p.name, p.schema ?? {}) ?? arbitraryFor(p.schema ?? {}, ctx)).map((valid) => ({ valid })) },
  )])) as Record<string, fc.Arbitrary<QueryChoice>>)
  const query = queryParams.length === 0 ? fc.constant({}) : fc.oneof(
    { weight: 4, arbitrary: validQuery },
    { weight: 1, arbitrary: fc.tuple(validQuery, fc.nat(), hostileQueryValue).map(([q, i, hostile]) => ({ ...q, [queryParams[i % queryParams.length].name]: { hostile } })) },
  )
  const extraQuery = fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('unknown=1', 'page=1&page=2', 'limit[]=5', '%zz=1', 'a=%zz', '__proto__[x]=1', 'token=abc', 'q=%00') },
  )

  const schema = requestBodySchema(operation)
  const withBody = ['POST', 'PUT', 'PATCH'].includes(operation.method)
  let body: fc.Arbitrary<BodyPlan>
  if (schema) {
    // Bodies a schema cannot describe (which credential fields go with which auth_type, a graph whose
    // edges name its nodes) come from the fixtures, so valid requests reach the handlers' success paths.
    const known = ctx.bodyHint?.(operation.method, operation.path)
    const generated = arbitraryFor(schema, ctx)
    const valid = known ? fc.oneof(generated, known) : generated
    body = fc.oneof(
      { weight: 4, arbitrary: valid.map((json) => ({ json })) },
      { weight: 4, arbitrary: fc.tuple(valid, bodyMutation).map(([json, mutation]) => ({ json, mutation })) },
      { weight: 1, arbitrary: hostileBodyText.map((text) => ({ text })) },
      { weight: 1, arbitrary: fc.constantFrom<BodyPlan>({ none: true }, { text: '' }) },
    )
  } else if (withBody) {
    body = fc.oneof(
      { weight: 4, arbitrary: fc.constant<BodyPlan>({ none: true }) },
      { weight: 2, arbitrary: fc.constantFrom<BodyPlan>({ text: '' }, { json: {} }) },
      { weight: 1, arbitrary: hostileBodyText.map((text) => ({ text })) },
    )
  } else {
    body = fc.constant({ none: true })
  }
  const contentType = fc.oneof({ weight: 12, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) })
  return fc.record({ role, path, query, extraQuery, body, contentType }, { requiredKeys: ['role', 'path', 'query', 'body', 'contentType'] })
}

/** Which pool a path parameter draws from: the segment before it names the collection. */
export function poolFor(pathTemplate: string, param: string, pools: PathPools, role?: Role): string[] {
  const before = pathTemplate.split(`{${param}}`)[0].split('/').filter(Boolean).pop() ?? ''
  const key = `${before}/${param}`
  return pools[`${key}@${role}`] ?? pools[key] ?? pools[param] ?? ['missing']
}

function queryText(value: unknown): string {
  // A lone surrogate has no UTF-8 form, so no client can send one; it becomes U+FFFD as a browser's would.
  return encodeURIComponent((typeof value === 'string' ? value : JSON.stringify(value)).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'))
}

export function buildRequest(operation: Operation, plan: RequestPlan, pools: PathPools, tokens: Record<Role, string | undefined>): BuiltRequest {
  const url = operation.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const choice = plan.path[name]
    if (!choice) return 'missing'
    if ('segment' in choice) return choice.segment
    const pool = poolFor(operation.path, name, pools, plan.role)
    return encodeURIComponent(pool[choice.pick % pool.length])
  })
  const parts: string[] = []
  for (const [name, choice] of Object.entries(plan.query)) {
    if ('valid' in choice) parts.push(`${name}=${queryText(choice.valid)}`)
    else if ('hostile' in choice) parts.push(`${name}=${choice.hostile}`)
  }
  if (plan.extraQuery) parts.push(plan.extraQuery)
  const headers: Record<string, string> = {}
  const token = tokens[plan.role]
  if (token) headers.authorization = `Bearer ${token}`
  let payload: string | undefined
  if ('json' in plan.body) payload = serializeBody(plan.body.mutation ? mutate(plan.body.json, plan.body.mutation) : plan.body.json)
  else if ('text' in plan.body) payload = plan.body.text
  if (payload !== undefined && plan.contentType) headers['content-type'] = plan.contentType
  return { method: operation.method, url: parts.length ? `${url}?${parts.join('&')}` : url, headers, ...(payload !== undefined && { payload }) }
}

/** One line a person can paste into curl's argument list, long parts cut. */
export function describeRequest(req: BuiltRequest, role: Role): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s)
  const ct = req.headers['content-type'] !== undefined ? ` content-type=${JSON.stringify(req.headers['content-type'])}` : ''
  const body = req.payload !== undefined ? ` body=${cut(JSON.stringify(req.payload), 300)}` : ''
  return `${req.method} ${cut(req.url, 200)} as ${role}${ct}${body}`
}

