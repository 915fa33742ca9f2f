// Kubernetes reports every failure as a v1 Status object; handlers throw ApiError and the server turns
// it into the exact JSON shape clients parse (client-node reads .code/.message, kubectl reads .reason).
export interface StatusCause { type?: string; message?: string; field?: string; reason?: string }
export interface StatusDetails { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number }
export interface StatusObject {
  kind: 'Status'
  apiVersion: 'v1'
  metadata: Record<string, never>
  status: 'Success' | 'Failure'
  message?: string
  reason?: string
  details?: StatusDetails
  code: number
}

const reasons: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
}

export function reasonFor(code: number): string {
  return reasons[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest')
}

export function statusObject(code: number, message: string, reason = reasonFor(code), details?: StatusDetails): StatusObject {
  const s: StatusObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }
  if (details) s.details = details
  return s
}

export function successStatus(details?: StatusDetails): StatusObject {
  const s: StatusObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 }
  if (details) s.details = details
  return s
}

export class ApiError extends Error {
  readonly status: StatusObject
  constructor(code: number, message: string, reason?: string, details?: StatusDetails) {
    super(message)
    this.status = statusObject(code, message, reason, details)
  }
  get code(): number { return this.status.code }
}

/** `pods "x"` / `deployments.apps "x"` — the qualified resource as the apiserver prints it. */
export function qualified(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource
}

export function notFound(resource: string, group: string, name: string): ApiError {
  return new ApiError(404, `${qualified(resource, group)} "${name}" not found`, 'NotFound', { name, group: group || undefined, kind: resource })
}

export function alreadyExists(resource: string, group: string, name: string): ApiError {
  return new ApiError(409, `${qualified(resource, group)} "${name}" already exists`, 'AlreadyExists', { name, group: group || undefined, kind: resource })
}

export function conflict(resource: string, group: string, name: string, why: string): ApiError {
  return new ApiError(409, `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": ${why}`, 'Conflict', { name, group: group || undefined, kind: resource })
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, message, 'BadRequest')
}

export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const what = causes.map((c) => `${c.field}: ${c.message}`).join(', ')
  const gk = group ? `${kind}.${group}` : kind
  return new ApiError(422, `${gk} "${name}" is invalid: ${what}`, 'Invalid', {
    name, group: group || undefined, kind, causes: causes.map((c) => ({ reason: c.reason ?? 'FieldValueInvalid', message: c.message, field: c.field })),
  })
}
