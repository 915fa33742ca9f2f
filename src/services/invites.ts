// Invite codes (spec Settings group): one current code, random, compared in constant time. With
// "regenerate after signup" on, each signup that used the code replaces it, atomically, so a code
// admits exactly one person even when two signups race.
import { SettingsRepository } from '../repositories/settings.ts'
import { constantTimeEqual, randomInviteCode } from './secrets.ts'

export interface InviteCodeReply { invite_code: string; created_at: string }

export class InviteService {
  constructor(private readonly settings: SettingsRepository, private readonly now: () => Date = () => new Date()) {}

  /** The current code, created on first use. */
  async current(): Promise<InviteCodeReply> {
    const rec = await this.settings.ensureInviteCode(randomInviteCode(), this.now())
    return { invite_code: rec.code, created_at: rec.created_at.toISOString() }
  }

  /** Replaces the code; the old one stops working at once. */
  async generate(): Promise<InviteCodeReply> {
    const rec = await this.settings.replaceInviteCode(randomInviteCode(), this.now())
    return { invite_code: rec.code, created_at: rec.created_at.toISOString() }
  }

  async regenerateAfterSignup(): Promise<boolean> {
    return this.settings.regenerateAfterSignup()
  }

  async setRegenerateAfterSignup(value: boolean): Promise<boolean> {
    await this.settings.setRegenerateAfterSignup(value, this.now())
    return value
  }

  /** Whether `code` is the current invite code (constant-time comparison). */
  async matches(code: string | undefined | null): Promise<boolean> {
    if (!code) return false
    const rec = await this.settings.inviteCode()
    return !!rec && constantTimeEqual(rec.code, code.trim())
  }

  /**
   * Records that a signup used `code`: with regeneration on, the code is replaced, and false is returned if
   * it was no longer current (someone else consumed it first).
   */
  async consume(code: string): Promise<boolean> {
    if (!(await this.matches(code))) return false
    if (!(await this.settings.regenerateAfterSignup())) return true
    return this.settings.rotateInviteCode(code.trim(), randomInviteCode(), this.now())
  }
}
