// Typed errors that services throw; plugins/errors.ts turns them into `{error}` replies with these codes.
export class AppError extends Error {
  constructor(readonly statusCode: number, message: string) {
    super(message)
    this.name = new.target.name
  }
}
export class BadRequest extends AppError { constructor(message: string) { super(400, message) } }
export class Unauthorized extends AppError { constructor(message = 'authentication required') { super(401, message) } }
export class Forbidden extends AppError { constructor(message = 'insufficient permissions') { super(403, message) } }
export class NotFound extends AppError { constructor(what = 'resource') { super(404, `${what} not found`) } }
export class Conflict extends AppError { constructor(message: string) { super(409, message) } }
/** A cluster, registry or git host answered badly or not at all. */
export class UpstreamError extends AppError { constructor(message: string) { super(502, message) } }
export class Unavailable extends AppError { constructor(message: string) { super(503, message) } }
/** The database could not store a change because its disk is full. */
export class InsufficientStorage extends AppError { constructor(message = "the database's disk is full") { super(507, message) } }

// MongoDB's OutOfDiskSpace, and FileStreamFailed, which the embedded server answers for other I/O
// failures of its journal. Either way the change was not stored.
const OUT_OF_DISK_SPACE = 14031
const FILE_STREAM_FAILED = 39

/**
 * The reply for a database error that means "the change could not be stored" (a full or failing disk),
 * looking through a few `cause` links in case a service wrapped it; undefined for any other error.
 */
export function storageFailure(err: unknown): AppError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (!e.name.startsWith('Mongo')) continue
    const code = (e as { code?: unknown }).code
    if (code === OUT_OF_DISK_SPACE) return new InsufficientStorage()
    if (code === FILE_STREAM_FAILED) return new Unavailable('the database could not store the change')
  }
  return undefined
}

/** The one text a client gets while the database cannot be reached (API.md §14). */
export const DATABASE_UNAVAILABLE = 'the database is unavailable'
/** Seconds a client is told to wait before trying again when the database is away. */
export const DATABASE_RETRY_AFTER_S = 5

// The driver's classes for "no server to talk to": none could be selected in time, the connection broke or
// timed out (MongoNetworkError and its subclasses: MongoNetworkTimeoutError, the pool-cleared errors), the
// client or its pool is closed or not connected, or a connection could not be checked out in time.
// Matched by name, so a second copy of the driver (a dependency's) is recognised too.
const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoPoolClearedError',
  'PoolClearedOnNetworkError', 'MongoPoolClosedError', 'MongoWaitQueueTimeoutError', 'MongoNotConnectedError',
  'MongoTopologyClosedError', 'MongoServerClosedError', 'MongoClientClosedError',
])
// Server answers that mean "not now, try again": a server shutting down or stepping down, or one that
// cannot reach its peers (MongoDB's error codes).
const UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
])

/** The error inside: a wrapper's `cause`, or the driver error a bulk write (insertMany) wraps as `errorResponse`. */
const inner = (e: Error): unknown => e.cause ?? ((e as { errorResponse?: unknown }).errorResponse instanceof Error ? (e as { errorResponse?: unknown }).errorResponse : undefined)

/**
 * Whether an error means the database could not be reached (rather than that it refused the operation),
 * looking through a few wrappers (a service's `cause`, a bulk write's driver error). It may be tried again.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = inner(e), depth++) {
    if (!e.name.startsWith('Mongo') && e.name !== 'PoolClearedOnNetworkError') continue
    if (UNAVAILABLE_NAMES.has(e.name)) return true
    if (UNAVAILABLE_CODES.has((e as { code?: unknown }).code as number)) return true
  }
  return false
}
