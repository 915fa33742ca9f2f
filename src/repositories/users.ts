// Users and their sign-in identities (one per linked OAuth provider account). Emails are stored trimmed
// and lower-cased with a unique index; an identity is unique per (provider, subject). Password hashes
// never leave this module except to the password check.
import { ObjectId, type Collection, type Db } from 'mongodb'
import { Conflict } from '../errors.ts'
import { paginate, type Page, type PageRequest } from './pagination.ts'
import type { UserRecord } from '../../schemas/user.ts'
import { isDuplicateKey, insertUnique } from './errors.ts'

export type Role = 'admin' | 'user'

export interface UserDoc {
  _id: ObjectId
  email: string
  name: string
  role: Role
  password_hash: string | null
  avatar_url: string | null
  auth_provider: string | null
  linked_providers: string[]
  created_at: Date
  updated_at: Date
}

export interface IdentityDoc {
  _id: ObjectId
  provider: string
  subject: string
  user_id: ObjectId
  email: string | null
  created_at: Date
}

export type NewUser = Pick<UserDoc, 'email' | 'name' | 'password_hash' | 'avatar_url' | 'auth_provider'>

const USERS = 'users'
const IDENTITIES = 'user_identities'


export async function userIndexes(db: Db): Promise<void> {
  await db.collection(USERS).createIndex({ email: 1 }, { unique: true, name: 'email_unique' })
  await db.collection(USERS).createIndex({ created_at: 1 }, { name: 'created_at' })
  await db.collection(IDENTITIES).createIndex({ provider: 1, subject: 1 }, { unique: true, name: 'provider_subject_unique' })
  await db.collection(IDENTITIES).createIndex({ user_id: 1 }, { name: 'user_id' })
}

/** Trims and lower-cases an email address: the one form stored and looked up. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

export function toObjectId(id: string): ObjectId | undefined {
  return /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : undefined
}

/** The API shape of a user (API.md §2); never carries the password hash. */
export function toUser(doc: UserDoc): UserRecord {
  return {
    id: doc._id.toHexString(),
    name: doc.name,
    email: doc.email,
    role: doc.role,
    avatar_url: doc.avatar_url ?? null,
    auth_provider: doc.auth_provider ?? null,
    linked_providers: doc.linked_providers ?? [],
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  }
}

export class UsersRepository {
  readonly users: Collection<UserDoc>
  readonly identities: Collection<IdentityDoc>

  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.users = db.collection<UserDoc>(USERS)
    this.identities = db.collection<IdentityDoc>(IDENTITIES)
  }

  /** Inserts a user with role `user`; 409 when the email is taken. */
  async insert(input: NewUser): Promise<UserDoc> {
    const at = this.now()
    const doc: UserDoc = { _id: new ObjectId(), ...input, email: normalizeEmail(input.email), role: 'user', linked_providers: [], created_at: at, updated_at: at }
    await insertUnique(this.users, doc, () => new Conflict('an account with this email already exists'))
    return doc
  }

  async findById(id: string): Promise<UserDoc | null> {
    const _id = toObjectId(id)
    return _id ? this.users.findOne({ _id }) : null
  }

  async findByEmail(email: string): Promise<UserDoc | null> {
    return this.users.findOne({ email: normalizeEmail(email) })
  }

  async findByIdentity(provider: string, subject: string): Promise<UserDoc | null> {
    const identity = await this.identities.findOne({ provider, subject })
    return identity ? this.users.findOne({ _id: identity.user_id }) : null
  }

  /** Links a provider account to a user; 409 if that provider account is linked to someone already. */
  async linkIdentity(userId: ObjectId, provider: string, subject: string, email: string | null): Promise<void> {
    try {
      await this.identities.insertOne({ _id: new ObjectId(), provider, subject, user_id: userId, email, created_at: this.now() })
    } catch (err) {
      if (isDuplicateKey(err)) throw new Conflict('this provider account is already linked to a user')
      throw err
    }
    await this.users.updateOne({ _id: userId }, { $addToSet: { linked_providers: provider }, $set: { updated_at: this.now() } })
  }

  async update(id: string, changes: Partial<Pick<UserDoc, 'name' | 'avatar_url' | 'role' | 'password_hash'>>): Promise<UserDoc | null> {
    const _id = toObjectId(id)
    if (!_id) return null
    return this.users.findOneAndUpdate({ _id }, { $set: { ...changes, updated_at: this.now() } }, { returnDocument: 'after' })
  }

  /** Deletes a user and its identities; true if it existed. */
  async delete(id: string): Promise<boolean> {
    const _id = toObjectId(id)
    if (!_id) return false
    const { deletedCount } = await this.users.deleteOne({ _id })
    await this.identities.deleteMany({ user_id: _id })
    return deletedCount === 1
  }

  async count(): Promise<number> {
    return this.users.countDocuments({})
  }

  /** A page of users (admin listings): sort by created_at, email or name; search email and name. */
  async list(req: PageRequest): Promise<Page<UserRecord>> {
    return paginate(this.users, req, { filter: {}, sortFields: { created_at: 'created_at', email: 'email', name: 'name' }, searchFields: ['email', 'name'] }, toUser)
  }
}
