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
