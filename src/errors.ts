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
