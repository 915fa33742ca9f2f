// Every repository that owns indexes lists its set-up here; the database plugin runs them all at start-up,
// so a fresh database (embedded or real) has its unique and TTL indexes before the first request.
import type { Db } from 'mongodb'
import { userIndexes } from './users.ts'
import { oauthStateIndexes } from './oauth-states.ts'
import { oauthCodeIndexes } from './oauth-codes.ts'
import { leaseIndexes } from '../replicas/leases.ts'
import { eventLogIndexes } from '../replicas/event-log.ts'
import { rateLimitIndexes } from '../replicas/rate-limit-store.ts'

/** What some index set-ups need from the configuration (the database plugin passes it; tests may not). */
export interface IndexOptions { eventRetentionS?: number }

export type IndexSetup = (db: Db, opts?: IndexOptions) => Promise<void>

export const indexSetups: IndexSetup[] = []

indexSetups.push(userIndexes, oauthStateIndexes, oauthCodeIndexes, leaseIndexes, eventLogIndexes, rateLimitIndexes)
