// Requests and replies of the auth group (spec "Authentication endpoints", API.md §2).
import { Type } from 'typebox'
import { Email, Password, UserName } from './user.ts'

// The User component (plugins/schemas.ts registers it), so a generated client has one User type.
const UserRef = Type.Ref('User')

export const Jwt = Type.String({ description: 'access token (JWT, HS256); send as `Authorization: Bearer <token>`; valid 24 h' })
export const InviteCodeValue = Type.String({ minLength: 1, maxLength: 128, description: 'invite code from an admin (GET /settings/invite-code)' })

export const RegisterBody = Type.Object({
  email: Email,
  password: Password,
  name: UserName,
  invite_code: Type.Optional(InviteCodeValue),
}, { additionalProperties: false })

export const RegisterResponse = Type.Object({
  token: Jwt,
  id: Type.String({ description: 'the new user\'s id' }),
  email: Type.String({ format: 'email' }),
  user: UserRef,
}, { additionalProperties: false })

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 128 }),
}, { additionalProperties: false })

export const TokenResponse = Type.Object({ token: Jwt, user: UserRef }, { additionalProperties: false })

export const MethodsResponse = Type.Object({
  builtin: Type.Object({
    enabled: Type.Boolean({ description: 'email and password sign-in' }),
    signup_enabled: Type.Boolean({ description: 'registration is open: no invite code needed (OPEN_SIGNUP, or no user exists yet)' }),
    invite_required: Type.Boolean({ description: 'registration needs an invite code' }),
  }, { additionalProperties: false }),
  providers: Type.Array(Type.Object({
    name: Type.String({ description: 'the key used in /auth/oauth/:provider/...' }),
    display_name: Type.String(),
    icon: Type.String(),
  }, { additionalProperties: false })),
}, { additionalProperties: false })

export const ProviderParams = Type.Object({
  provider: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$', description: 'a provider name from GET /auth/methods' }),
}, { additionalProperties: false })

export const AuthorizeQuery = Type.Object({
  invite_code: Type.Optional(InviteCodeValue),
}, { additionalProperties: false })

// The provider adds what it likes to the callback (session_state, iss, scope...): unknown parameters are
// ignored rather than refused, and only these are read.
export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 1024 })),
})

export const RedirectResponse = Type.Object({
  redirect_url: Type.String({ description: 'where the browser is sent (the Location of the 302 answer)' }),
}, { additionalProperties: false })

export const ExchangeBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 256, description: 'the one-time code from <FRONTEND_URL>/auth/callback?code=...' }),
}, { additionalProperties: false })
