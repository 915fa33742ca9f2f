// Error codes and the error type commands throw. The driver turns `{ok: 0, code, codeName, errmsg}`
// replies into MongoServerError, copying extra fields such as keyPattern/keyValue onto the error.
import type { Doc } from './values.ts'

export const ErrorCodes = {
  InternalError: 1,
  BadValue: 2,
  FailedToParse: 9,
  Unauthorized: 13,
  TypeMismatch: 14,
  InvalidLength: 16,
  BSONObjectTooLarge: 10334,
  IllegalOperation: 20,
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  ConflictingUpdateOperators: 40,
  CursorNotFound: 43,
  NamespaceExists: 48,
  InvalidIdField: 53,
  CommandNotFound: 59,
  ImmutableField: 66,
  CannotCreateIndex: 67,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  CommandNotSupported: 115,
  CannotIndexParallelArrays: 171,
  Location40324: 40324,
  UnsupportedOpQueryCommand: 352,
  DuplicateKey: 11000,
  NoDollarDbField: 40571,
  FileStreamFailed: 39,
  OutOfDiskSpace: 14031,
} as const

const codeNames: Record<number, string> = Object.fromEntries(
  Object.entries(ErrorCodes).map(([name, code]) => [code, name]),
)
codeNames[40324] = 'Location40324'
codeNames[40571] = 'Location40571'

export function codeName(code: number): string {
  return codeNames[code] ?? 'UnknownError'
}

export class CommandError extends Error {
  readonly code: number
  readonly extra: Doc

  constructor(code: number, message: string, extra: Doc = {}) {
    super(message)
    this.name = 'CommandError'
    this.code = code
    this.extra = extra
  }

  toReply(): Doc {
    return { ok: 0, errmsg: this.message, code: this.code, codeName: codeName(this.code), ...this.extra }
  }

  /** Shape used inside `writeErrors` arrays. */
  toWriteError(index: number): Doc {
    return { index, code: this.code, errmsg: this.message, ...this.extra }
  }
}

/** Anything thrown while running a command becomes a CommandError; mingo's errors are user input problems. */
export function toCommandError(err: unknown): CommandError {
  if (err instanceof CommandError) return err
  const message = err instanceof Error ? err.message : String(err)
  const name = err instanceof Error ? err.constructor.name : ''
  if (name === 'MingoError') {
    if (/would create a conflict/.test(message)) return new CommandError(ErrorCodes.ConflictingUpdateOperators, message)
    if (/immutable field/.test(message)) return new CommandError(ErrorCodes.ImmutableField, message)
    return new CommandError(ErrorCodes.BadValue, message)
  }
  if (err instanceof SyntaxError) return new CommandError(ErrorCodes.BadValue, message) // e.g. invalid $regex
  return new CommandError(ErrorCodes.InternalError, message)
}

/** The message a client sees when the journal could not grow; the service layer matches on the code, not this text. */
export const DISK_FULL_MESSAGE = "the database's disk is full"

/**
 * What a client is told when its write could not be made durable (and so was undone). MongoDB answers a
 * full disk with OutOfDiskSpace; other I/O failures get FileStreamFailed and the errno code only, since
 * the operating system's text can name paths.
 */
export function storageWriteError(cause: unknown): CommandError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ENOSPC' || code === 'EDQUOT') return new CommandError(ErrorCodes.OutOfDiskSpace, DISK_FULL_MESSAGE)
  return new CommandError(ErrorCodes.FileStreamFailed, `the database could not write to its disk${typeof code === 'string' ? ` (${code})` : ''}`)
}
