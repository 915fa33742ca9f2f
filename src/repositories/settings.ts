// Service-wide settings kept as single documents in `settings`: the invite code, whether a signup rotates
// it, and the bootstrap claim that makes exactly one first user the admin.
import type { Collection, Db } from 'mongodb'
import { isDuplicateKey } from './errors.ts'

interface InviteCodeDoc { _id: 'invite_code'; code: string; created_at: Date }
interface RegenerateDoc { _id: 'invite_regenerate'; regenerate_after_signup: boolean; updated_at: Date }
interface BootstrapDoc { _id: 'bootstrap_admin'; user_id: string; created_at: Date }
type SettingsDoc = InviteCodeDoc | RegenerateDoc | BootstrapDoc

export interface InviteCodeRecord { code: string; created_at: Date }

export class SettingsRepository {
  private readonly settings: Collection<SettingsDoc>

  constructor(db: Db) {
    this.settings = db.collection<SettingsDoc>('settings')
  }

  async inviteCode(): Promise<InviteCodeRecord | null> {
    const doc = await this.settings.findOne({ _id: 'invite_code' }) as InviteCodeDoc | null
    return doc ? { code: doc.code, created_at: doc.created_at } : null
  }

  /** The current invite code, creating `fresh` if there is none yet (two racing callers get the same one). */
  async ensureInviteCode(fresh: string, at: Date): Promise<InviteCodeRecord> {
    try {
      await this.settings.updateOne({ _id: 'invite_code' }, { $setOnInsert: { code: fresh, created_at: at } }, { upsert: true })
    } catch (err) {
      if (!isDuplicateKey(err)) throw err
    }
    return (await this.inviteCode())!
  }

  async replaceInviteCode(code: string, at: Date): Promise<InviteCodeRecord> {
    await this.settings.updateOne({ _id: 'invite_code' }, { $set: { code, created_at: at } }, { upsert: true })
    return { code, created_at: at }
  }

  /** Replaces the code only if it is still `current`; false when someone else rotated it first. */
  async rotateInviteCode(current: string, next: string, at: Date): Promise<boolean> {
    const res = await this.settings.updateOne({ _id: 'invite_code', code: current } as never, { $set: { code: next, created_at: at } })
    return res.modifiedCount === 1
  }

  async regenerateAfterSignup(): Promise<boolean> {
    const doc = await this.settings.findOne({ _id: 'invite_regenerate' }) as RegenerateDoc | null
    return doc?.regenerate_after_signup ?? false
  }

  async setRegenerateAfterSignup(value: boolean, at: Date): Promise<void> {
    await this.settings.updateOne({ _id: 'invite_regenerate' }, { $set: { regenerate_after_signup: value, updated_at: at } }, { upsert: true })
  }

  /** True once a first user has claimed the admin role. */
  async isBootstrapped(): Promise<boolean> {
    return (await this.settings.countDocuments({ _id: 'bootstrap_admin' }, { limit: 1 })) > 0
  }

  /** The first caller (by the unique _id) becomes the bootstrap admin; everyone after gets false. */
  async claimBootstrap(userId: string, at: Date): Promise<boolean> {
    try {
      await this.settings.insertOne({ _id: 'bootstrap_admin', user_id: userId, created_at: at })
      return true
    } catch (err) {
      if (isDuplicateKey(err)) return false
      throw err
    }
  }
}
