// Invite codes (spec Settings group): one current code, random, shown once when it is generated (as GitHub
// shows a new token) and stored only as its SHA-256, so a database read or a backup does not hand out a
// way in. A code carries 100 random bits, so a plain hash is enough (a slow password hash protects guessable
// secrets). Registration compares hashes in constant time. With "regenerate after signup" on, each signup
// that used the code replaces it, atomically, so a code admits exactly one person even when two race; the
// replacement is shown to nobody: an admin generates a fresh code to invite the next person.
import { createHash, timingSafeEqual } from 'node:crypto'
import { SettingsRepository, type InviteCodeRecord } from '../repositories/settings.ts'
import { randomInviteCode } from './secrets.ts'

/** How many of a code's last characters GET /settings/invite-code shows, to tell codes apart. */
export const HINT_LENGTH = 4

/** POST /settings/generate-invite-code: the new code, in full, this once. */
export interface InviteCodeReply { invite_code: string; hint: string; created_at: string }
/** GET /settings/invite-code: which code is current, never the code itself. */
export interface InviteCodeStatus { invite_code: null; hint: string | null; created_at: string | null }

export function hashInviteCode(code: string): string {
  return createHash('sha256').update(code.trim(), 'utf8').digest('hex')
}

const hintOf = (code: string) => code.trim().slice(-HINT_LENGTH)

export class InviteService {
  constructor(private readonly settings: SettingsRepository, private readonly now: () => Date = () => new Date()) {}

  /** The current code's hint and date (both null when none was generated yet). */
  async current(): Promise<InviteCodeStatus> {
    const rec = await this.record()
    return { invite_code: null, hint: rec?.hint || null, created_at: rec ? rec.created_at.toISOString() : null }
  }

  /** Replaces the code; the old one stops working at once. The reply is the only place the code appears. */
  async generate(): Promise<InviteCodeReply> {
    const code = randomInviteCode()
    const rec = await this.settings.replaceInviteCode(hashInviteCode(code), hintOf(code), this.now())
    return { invite_code: code, hint: rec.hint, created_at: rec.created_at.toISOString() }
  }

  async regenerateAfterSignup(): Promise<boolean> {
    return this.settings.regenerateAfterSignup()
  }

  async setRegenerateAfterSignup(value: boolean): Promise<boolean> {
    await this.settings.setRegenerateAfterSignup(value, this.now())
    return value
  }

  /** Whether `code` is the current invite code (its hash compared in constant time). */
  async matches(code: string | undefined | null): Promise<boolean> {
    if (!code) return false
    const rec = await this.record()
    return !!rec && timingSafeEqual(Buffer.from(rec.hash, 'hex'), Buffer.from(hashInviteCode(code), 'hex'))
  }

  /**
   * Records that a signup used `code`: with regeneration on, the code is replaced, and false is returned if
   * it was no longer current (someone else consumed it first).
   */
  async consume(code: string): Promise<boolean> {
    if (!(await this.matches(code))) return false
    if (!(await this.settings.regenerateAfterSignup())) return true
    const next = randomInviteCode()
    return this.settings.rotateInviteCode(hashInviteCode(code), hashInviteCode(next), hintOf(next), this.now())
  }

  /** The stored code; one an older version kept in plain text is hashed in place first. */
  private async record(): Promise<InviteCodeRecord | null> {
    const rec = await this.settings.inviteCode()
    if (!rec || !('legacy_code' in rec)) return rec
    await this.settings.migrateInviteCode(rec.legacy_code, hashInviteCode(rec.legacy_code), hintOf(rec.legacy_code))
    const again = await this.settings.inviteCode()
    return again && !('legacy_code' in again) ? again : null
  }
}
