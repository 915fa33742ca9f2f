// Service-wide settings kept as single documents in `settings`: the invite code, whether a signup rotates
// it, and the bootstrap claim that makes exactly one first user the admin.
import type { Collection, Db } from 'mongodb'
import { isDuplicateKey } from './errors.ts'

// The code itself is never stored: its SHA-256 (hex) and its last characters, so an admin can tell which
// code is current. `code` is how older versions stored it, in plain text (migrated on first read).
interface InviteCodeDoc { _id: 'invite_code'; code_hash?: string; hint?: string; code?: string; created_at: Date }
interface RegenerateDoc { _id: 'invite_regenerate'; regenerate_after_signup: boolean; updated_at: Date }
interface BootstrapDoc { _id: 'bootstrap_admin'; user_id: string; created_at: Date }
type SettingsDoc = InviteCodeDoc | RegenerateDoc | BootstrapDoc

export interface InviteCodeRecord { hash: string; hint: string; created_at: Date }
/** A code stored by an older version, in plain text: the caller hashes it and calls migrateInviteCode. */
export interface LegacyInviteCode { legacy_code: string; created_at: Date }

export class SettingsRepository {
  private readonly settings: Collection<SettingsDoc>

  constructor(db: Db) {
    this.settings = db.collection<SettingsDoc>('settings')
  }

  async inviteCode(): Promise<InviteCodeRecord | LegacyInviteCode | null> {
    const doc = await this.settings.findOne({ _id: 'invite_code' }) as InviteCodeDoc | null
    if (!doc) return null
    if (typeof doc.code_hash === 'string') return { hash: doc.code_hash, hint: doc.hint ?? '', created_at: doc.created_at }
    return typeof doc.code === 'string' ? { legacy_code: doc.code, created_at: doc.created_at } : null
  }

  /** Replaces a plain-text code by its hash, unless it changed meanwhile (then the caller reads again). */
  async migrateInviteCode(legacy: string, hash: string, hint: string): Promise<void> {
    await this.settings.updateOne({ _id: 'invite_code', code: legacy } as never, { $set: { code_hash: hash, hint }, $unset: { code: '' } } as never)
  }

  async replaceInviteCode(hash: string, hint: string, at: Date): Promise<InviteCodeRecord> {
    await this.settings.updateOne({ _id: 'invite_code' }, { $set: { code_hash: hash, hint, created_at: at }, $unset: { code: '' } } as never, { upsert: true })
    return { hash, hint, created_at: at }
  }

  /** Replaces the code only if it is still the one hashed `current`; false when someone else rotated it first. */
  async rotateInviteCode(current: string, next: string, hint: string, at: Date): Promise<boolean> {
    const res = await this.settings.updateOne({ _id: 'invite_code', code_hash: current } as never, { $set: { code_hash: next, hint, created_at: at } })
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
