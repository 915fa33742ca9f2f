// Accounts: registration (the first user becomes admin, atomically; after that an invite code unless
// OPEN_SIGNUP), password sign-in, token refresh, the per-request user lookup behind every token, and the
// profile. Other groups use `authenticate`, `get`, `setRole` and `delete`; the last two drop the cached
// entry so a role change or deletion applies to the next request.
import { BadRequest, Forbidden, NotFound, Unauthorized } from '../errors.ts'
import { normalizeEmail, toUser, type NewUser, type Role, type UserDoc, type UsersRepository } from '../repositories/users.ts'
import type { SettingsRepository } from '../repositories/settings.ts'
import type { UserRecord } from '../../schemas/user.ts'
import type { InviteService } from './invites.ts'
import type { TokenService } from './tokens.ts'
import { hashPassword, verifyPassword } from './passwords.ts'

/** Who is calling: set on `request.user` for every authenticated request. */
export interface AuthUser { id: string; role: Role; email: string }

export interface Admission {
  /** The invite code the person presented, if any. */
  inviteCode?: string | null
  /** A trusted identity provider may create accounts without an invite code. */
  trusted?: boolean
}

export interface UserServiceOptions {
  users: UsersRepository
  settings: SettingsRepository
  invites: InviteService
  tokens: TokenService
  openSignup: boolean
  /** How long a token's user may be served from memory (0 = look it up on every request). */
  cacheMs: number
  now?: () => Date
}

const INVALID_LOGIN = 'invalid email or password'
const CACHE_MAX_ENTRIES = 10_000

export class UserService {
  private readonly cache = new Map<string, { user: AuthUser | null; until: number }>()
  private readonly now: () => Date

  constructor(private readonly o: UserServiceOptions) {
    this.now = o.now ?? (() => new Date())
  }

  /** Whether someone may register without an invite code right now. */
  async signupOpen(): Promise<boolean> {
    return this.o.openSignup || !(await this.o.settings.isBootstrapped())
  }

  /**
   * Creates an account. The first account to claim the bootstrap slot is the admin and needs no invite;
   * every later one needs a valid invite code unless signup is open or the provider is trusted. Nothing is
   * left behind when admission fails.
   */
  async createAccount(input: NewUser, admission: Admission = {}): Promise<UserDoc> {
    const { settings, invites } = this.o
    const bypass = this.o.openSignup || admission.trusted === true
    const bootstrapped = await settings.isBootstrapped()
    if (bootstrapped && !bypass) await this.requireInvite(admission.inviteCode)

    let user = await this.o.users.insert(input)
    let inviteUsed = bootstrapped && !bypass
    if (!bootstrapped) {
      if (await settings.claimBootstrap(user._id.toHexString(), this.now())) {
        user = (await this.o.users.update(user._id.toHexString(), { role: 'admin' }))!
        // No code is made here: a code is shown only when generated, so the admin generates one to invite.
        return user
      }
      // Another registration became the first user in the meantime: this one is an ordinary signup.
      if (!bypass) {
        try {
          await this.requireInvite(admission.inviteCode)
        } catch (err) {
          await this.o.users.delete(user._id.toHexString())
          throw err
        }
        inviteUsed = true
      }
    }
    if (inviteUsed && !(await invites.consume(admission.inviteCode!))) {
      await this.o.users.delete(user._id.toHexString())
      throw new Forbidden('invalid invite code')
    }
    return user
  }

  private async requireInvite(code: string | null | undefined): Promise<void> {
    if (!code) throw new Forbidden('an invite code is required to sign up')
    if (!(await this.o.invites.matches(code))) throw new Forbidden('invalid invite code')
  }

  async register(input: { email: string; password: string; name: string; invite_code?: string }): Promise<{ token: string; id: string; email: string; user: UserRecord }> {
    const password_hash = await hashPassword(input.password)
    const doc = await this.createAccount(
      { email: normalizeEmail(input.email), name: input.name.trim(), password_hash, avatar_url: null, auth_provider: null },
      { inviteCode: input.invite_code },
    )
    const user = toUser(doc)
    return { token: this.issueFor(doc), id: user.id, email: user.email, user }
  }

  async login(input: { email: string; password: string }): Promise<{ token: string; user: UserRecord }> {
    const doc = await this.o.users.findByEmail(input.email)
    const ok = await verifyPassword(doc?.password_hash, input.password)
    if (!doc || !ok) throw new Unauthorized(INVALID_LOGIN)
    return { token: this.issueFor(doc), user: toUser(doc) }
  }

  /** A fresh token for a genuine (possibly expired) one whose sign-in is at most 7 days old. */
  async refresh(token: string): Promise<{ token: string; user: UserRecord }> {
    const claims = this.o.tokens.verifyForRefresh(token)
    const doc = await this.o.users.findById(claims.sub)
    if (!doc) throw new Unauthorized('invalid token')
    return { token: this.issueFor(doc, claims.auth_time), user: toUser(doc) }
  }

  /** A token for a user who signed in now (or at `authTime`, in seconds). */
  issueFor(doc: UserDoc, authTime = this.o.tokens.nowSeconds()): string {
    return this.o.tokens.issue({ id: doc._id.toHexString(), role: doc.role, email: doc.email }, authTime)
  }

  /** The caller behind a bearer token: verified, and looked up (briefly cached) so deletions and role changes apply. */
  async authenticate(token: string): Promise<AuthUser> {
    const claims = this.o.tokens.verify(token)
    const user = await this.lookup(claims.sub)
    if (!user) throw new Unauthorized('invalid token')
    return user
  }

  private async lookup(id: string): Promise<AuthUser | null> {
    const at = Date.now()
    const hit = this.cache.get(id)
    if (hit && hit.until > at) return hit.user
    const doc = await this.o.users.findById(id)
    const user = doc ? { id, role: doc.role, email: doc.email } : null
    if (this.o.cacheMs > 0) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear()
      this.cache.set(id, { user, until: at + this.o.cacheMs })
    }
    return user
  }

  /** Forget the cached copy of a user (after changing or deleting it elsewhere). */
  forget(id: string): void {
    this.cache.delete(id)
  }

  async get(id: string): Promise<UserRecord> {
    const doc = await this.o.users.findById(id)
    if (!doc) throw new NotFound('user')
    return toUser(doc)
  }

  async updateProfile(id: string, changes: { name?: string; avatar_url?: string | null }): Promise<UserRecord> {
    const set: { name?: string; avatar_url?: string | null } = {}
    if (changes.name !== undefined) set.name = changes.name.trim()
    if (changes.avatar_url !== undefined) set.avatar_url = changes.avatar_url
    const doc = await this.o.users.update(id, set)
    if (!doc) throw new NotFound('user')
    return toUser(doc)
  }

  async changePassword(id: string, current: string, next: string): Promise<void> {
    const doc = await this.o.users.findById(id)
    if (!doc) throw new NotFound('user')
    if (!doc.password_hash) throw new BadRequest('this account has no password: it signs in with its identity provider')
    if (!(await verifyPassword(doc.password_hash, current))) throw new BadRequest('current_password is incorrect')
    if (current === next) throw new BadRequest('new_password must differ from current_password')
    await this.o.users.update(id, { password_hash: await hashPassword(next) })
  }

  async setRole(id: string, role: Role): Promise<UserRecord> {
    const doc = await this.o.users.update(id, { role })
    this.forget(id)
    if (!doc) throw new NotFound('user')
    return toUser(doc)
  }

  async delete(id: string): Promise<void> {
    const existed = await this.o.users.delete(id)
    this.forget(id)
    if (!existed) throw new NotFound('user')
  }
}
