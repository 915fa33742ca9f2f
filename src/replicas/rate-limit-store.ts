// The sign-in rate limits' counters in MongoDB, for shared mode: with several replicas behind one address,
// counters kept in each process would give a client N times the budget (one per replica it reaches). This is
// a store for @fastify/rate-limit (its `store` option: `incr`, `read`, `child`) with the in-process store's
// semantics: a key's window starts at its first hit and lasts the route's window. One document per key,
// counted by one atomic pipeline update (a new window when the last has run out), removed by a TTL index
// once its window is over.
import type { Collection, Db } from 'mongodb'
import { isDuplicateKey } from '../repositories/errors.ts'

interface CounterDoc { _id: string; count: number; expires_at: Date }
type Result = { current: number; ttl: number }
type Callback = (err: Error | null, res?: Result) => void

const COLLECTION = 'rate_limits'

export async function rateLimitIndexes(db: Db): Promise<void> {
  await db.collection<CounterDoc>(COLLECTION).createIndex({ expires_at: 1 }, { expireAfterSeconds: 0 })
}

/** A @fastify/rate-limit store class whose counters live in the database `db()` returns (read on first use). */
export function sharedRateLimitStore(db: () => Db) {
  return class SharedRateLimitStore {
    private collection(): Collection<CounterDoc> { return db().collection<CounterDoc>(COLLECTION) }

    incr(key: string, cb: Callback, timeWindow: number): void {
      const now = new Date()
      const live = { $gt: ['$expires_at', now] }
      const bump = () => this.collection().findOneAndUpdate(
        { _id: key },
        [{ $set: {
          count: { $cond: [live, { $add: ['$count', 1] }, 1] },
          expires_at: { $cond: [live, '$expires_at', new Date(now.getTime() + timeWindow)] },
        } }],
        { upsert: true, returnDocument: 'after' },
      )
      // Two replicas creating the same key's counter at once: one insert wins, the other then counts on it.
      bump().catch((err: unknown) => { if (isDuplicateKey(err)) return bump(); throw err })
        .then((doc) => cb(null, doc ? { current: doc.count, ttl: Math.max(0, doc.expires_at.getTime() - now.getTime()) } : { current: 1, ttl: timeWindow }),
          (err: unknown) => cb(err as Error))
    }

    read(key: string, cb: Callback): void {
      const now = Date.now()
      this.collection().findOne({ _id: key })
        .then((doc) => cb(null, doc && doc.expires_at.getTime() > now ? { current: doc.count, ttl: doc.expires_at.getTime() - now } : { current: 0, ttl: 0 }),
          (err: unknown) => cb(err as Error))
    }

    child(): SharedRateLimitStore { return new SharedRateLimitStore() }
  }
}
