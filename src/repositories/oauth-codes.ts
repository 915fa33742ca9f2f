// One-time codes handed to the web client after an OAuth sign-in (spec: 30 seconds). Stored under the
// SHA-256 of the code, single use, expired by the TTL index and by a check on read.
import type { Collection, Db } from 'mongodb'

export const OAUTH_CODE_TTL_MS = 30 * 1000

export interface OAuthCodeDoc {
  _id: string
  user_id: string
  provider: string
  auth_time: number
  created_at: Date
  expires_at: Date
}

export async function oauthCodeIndexes(db: Db): Promise<void> {
  await db.collection('oauth_codes').createIndex({ expires_at: 1 }, { expireAfterSeconds: 0, name: 'expires_at_ttl' })
}

export class OAuthCodesRepository {
  private readonly codes: Collection<OAuthCodeDoc>

  constructor(db: Db) {
    this.codes = db.collection<OAuthCodeDoc>('oauth_codes')
  }

  async insert(doc: OAuthCodeDoc): Promise<void> {
    await this.codes.insertOne(doc)
  }

  /** Takes (deletes) the code; null when unknown, already used or expired at `now`. */
  async take(codeHash: string, now: Date): Promise<OAuthCodeDoc | null> {
    const doc = await this.codes.findOneAndDelete({ _id: codeHash })
    return doc && doc.expires_at.getTime() > now.getTime() ? doc : null
  }
}
