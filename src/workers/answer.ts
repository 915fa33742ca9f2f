// A job's answer crosses the thread boundary as plain data (structured clone), where an error's class is
// lost: a refusal the user should read (an AppError: ImportError, BadRequest...) is answered as data and
// thrown again on the main thread with its code; anything else is thrown and reported without its text.
import { AppError } from '../errors.ts'

export interface Refusal { refused: { statusCode: number; message: string } }
export type JobAnswer<T> = { value: T } | Refusal

export async function answer<T>(work: () => T | Promise<T>): Promise<JobAnswer<T>> {
  try {
    return { value: await work() }
  } catch (err) {
    if (err instanceof AppError) return { refused: { statusCode: err.statusCode, message: err.message } }
    throw err
  }
}
