// Accounts for tests: registerUser(app) signs up a new user through the real HTTP route (using the current
// invite code when one is needed) and returns its token. `role` forces the role afterwards ('admin' for
// admin-only routes, 'user' for a plain user even if it happened to be the first account).
import { randomBytes } from 'node:crypto'
import type { App } from '../../src/app-types.ts'

export interface TestUser {
  token: string
  user: { id: string; name: string; email: string; role: 'admin' | 'user'; [k: string]: unknown }
  email: string
  password: string
  /** `{ authorization: 'Bearer <token>' }`, for inject. */
  headers: { authorization: string }
}

let counter = 0

// Invite codes are shown only when generated (the service keeps a hash): one is generated per app and
// reused while it still admits (a rotation after signup, or a test generating its own, retires it).
const inviteCodes = new WeakMap<App, Promise<string>>()
export async function inviteCodeFor(app: App): Promise<string> {
  const known = inviteCodes.get(app)
  if (known && await app.invites.matches(await known)) return known
  const fresh = app.invites.generate().then((r) => r.invite_code)
  inviteCodes.set(app, fresh)
  return fresh
}

export async function registerUser(app: App, options: { role?: 'admin' | 'user'; email?: string; password?: string; name?: string } = {}): Promise<TestUser> {
  const email = options.email ?? `user${++counter}-${randomBytes(3).toString('hex')}@example.test`
  const password = options.password ?? `pw-${randomBytes(8).toString('hex')}`
  const name = options.name ?? `User ${counter}`
  const invite_code = (await app.users.signupOpen()) ? undefined : await inviteCodeFor(app)
  const res = await app.inject({ method: 'POST', url: '/v1/api/auth/register', payload: { email, password, name, ...(invite_code && { invite_code }) } })
  if (res.statusCode !== 201) throw new Error(`registerUser: ${res.statusCode} ${res.body}`)
  let { token, user } = res.json() as { token: string; user: TestUser['user'] }
  if (options.role && options.role !== user.role) {
    user = await app.users.setRole(user.id, options.role) as TestUser['user']
  }
  return { token, user, email, password, headers: { authorization: `Bearer ${token}` } }
}

/** Signs in with email and password through the real route. */
export async function loginUser(app: App, email: string, password: string): Promise<{ token: string; user: TestUser['user'] }> {
  const res = await app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: { email, password } })
  if (res.statusCode !== 200) throw new Error(`loginUser: ${res.statusCode} ${res.body}`)
  return res.json()
}
