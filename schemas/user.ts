// The user as the API shows it (API.md §2), and the profile requests.
import { Type, type Static } from 'typebox'
import { StringEnum, Timestamp } from './common.ts'

export const Role = StringEnum(['admin', 'user'], { description: 'admin may manage settings, plugins and other users' })

// Surrounding spaces are allowed (they are trimmed): what is pasted into a form often carries some.
// `format: email` as declared, enforced (ajv-formats); surrounding spaces are trimmed before validation
// by the routes taking one (src/routes/auth/index.ts), so " Ada@Example.com " is still accepted.
export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254, description: 'an email address (surrounding spaces ignored); stored trimmed and lower-cased; unique' })
export const Password = Type.String({ minLength: 8, maxLength: 128, description: '8 to 128 characters; write-only' })
export const UserName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'display name' })
export const AvatarUrl = Type.Union([
  Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
  Type.Null(),
], { description: 'http(s) address of a picture, or null' })

export const User = Type.Object({
  id: Type.String({ description: 'user id' }),
  name: Type.String(),
  email: Type.String({ format: 'email' }),
  role: Role,
  avatar_url: Type.Union([Type.String(), Type.Null()]),
  auth_provider: Type.Union([Type.String(), Type.Null()], { description: 'the OAuth provider the account was created with; null for email and password' }),
  linked_providers: Type.Array(Type.String(), { description: 'OAuth providers linked to this account' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'User', additionalProperties: false, description: 'a user as every reply shows it; no password or secret' })

export type UserRecord = Static<typeof User>

export const UpdateProfileBody = Type.Object({
  name: Type.Optional(UserName),
  avatar_url: Type.Optional(AvatarUrl),
}, { additionalProperties: false, minProperties: 1 })

export const ChangePasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 128 }),
  new_password: Password,
}, { additionalProperties: false })
