// Every repository that owns indexes lists its set-up here; the database plugin runs them all at start-up,
// so a fresh database (embedded or real) has its unique and TTL indexes before the first request.
import type { Db } from 'mongodb'
import { userIndexes } from './users.ts'
import { oauthStateIndexes } from './oauth-states.ts'
import { oauthCodeIndexes } from './oauth-codes.ts'

export type IndexSetup = (db: Db) => Promise<void>

export const indexSetups: IndexSetup[] = []

indexSetups.push(userIndexes, oauthStateIndexes, oauthCodeIndexes)
