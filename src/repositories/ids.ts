import { ObjectId } from 'mongodb'

/** New record ids: ObjectId hex strings, so ids sort by creation time and need no counter. */
export const newId = (): string => new ObjectId().toHexString()

/** Whether a string could be an id we issued; anything else cannot name a record (404, no query). */
export const isId = (value: string): boolean => /^[0-9a-f]{24}$/.test(value)
