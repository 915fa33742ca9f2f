// OAuth authorization states (spec: 10 minutes). Stored under the SHA-256 of the state so the database never
// holds a usable value; single use (taken with findOneAndDelete), bound to the provider, and expired both by
// the TTL index and by a check on read (a TTL sweep may lag).
import type { Collection, Db } from 'mongodb'

export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000

export interface OAuthStateDoc {
  _id: string
  provider: string
  code_verifier: string
  nonce: string
  invite_code: string | null
  created_at: Date
  expires_at: Date
}

export async function oauthStateIndexes(db: Db): Promise<void> {
  await db.collection('oauth_states').createIndex({ expires_at: 1 }, { expireAfterSeconds: 0, name: 'expires_at_ttl' })
}

export class OAuthStatesRepository {
  private readonly states: Collection<OAuthStateDoc>

  constructor(db: Db) {
    this.states = db.collection<OAuthStateDoc>('oauth_states')
  }

  async insert(doc: OAuthStateDoc): Promise<void> {
    await this.states.insertOne(doc)
  }

  /** Takes (deletes) the state if it exists for this provider and has not expired at `now`. */
  async take(stateHash: string, provider: string, now: Date): Promise<OAuthStateDoc | null> {
    const doc = await this.states.findOneAndDelete({ _id: stateHash, provider })
    return doc && doc.expires_at.getTime() > now.getTime() ? doc : null
  }
}
