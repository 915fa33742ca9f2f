import type { Collection, Document, OptionalUnlessRequiredId } from 'mongodb'
import { Conflict } from '../errors.ts'

/** Whether a driver error is a unique-index violation (code 11000). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000
}

/** Inserts a document, turning a unique-index violation into the given 409. */
export async function insertUnique<T extends Document>(collection: Collection<T>, doc: OptionalUnlessRequiredId<T>, conflict: () => Conflict): Promise<void> {
  try {
    await collection.insertOne(doc)
  } catch (err) {
    if (isDuplicateKey(err)) throw conflict()
    throw err
  }
}
