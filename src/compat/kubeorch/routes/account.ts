// The caller's account and the admin's settings in the UI's dialect (CONTRACT.md §2.2, §2.13): the same
// services and schemas as src/routes/profile/ and src/routes/settings/, with camelCase names in and out.
import type { App } from '../../../app-types.ts'
import { ChangePasswordBody, UpdateProfileBody } from '../../../../schemas/user.ts'
import { RegenerateSetting } from '../../../../schemas/settings.ts'
import { perUser } from '../../../routes/auth/rate-limits.ts'
import { canonicalBody, withCamelAliases } from '../translate.ts'
import { uiUser } from './auth.ts'

export default async function accountRoutes(app: App) {
  // The UI replaces its session user with `user` from this reply; the bare fields stay for our own readers.
  app.put('/profile', {
    preValidation: canonicalBody(),
    schema: { hide: true, body: UpdateProfileBody },
  }, async (request) => {
    const user = uiUser(await app.users.updateProfile(request.user.id, request.body))
    return { ...user, user }
  })

  app.put('/profile/password', {
    preValidation: canonicalBody(),
    preHandler: perUser(app, 'password'),
    schema: { hide: true, body: ChangePasswordBody },
  }, async (request, reply) => {
    await app.users.changePassword(request.user.id, request.body.current_password, request.body.new_password)
    return reply.code(204).send(null)
  })

  const admin = { requireAdmin: true }

  // The settings page reads the invite code from here. The service keeps only a hash of the code and shows
  // it once, when generated (API.md §2), so `inviteCode` is null: the page then shows its placeholder link
  // until the admin presses "Generate New Code", whose reply fills it. `inviteCodeHint` tells which code
  // is current.
  app.get('/settings/regenerate-setting', {
    config: admin,
    schema: { hide: true },
  }, async (_request, reply) => {
    reply.header('cache-control', 'no-store')
    const [regenerate, code] = await Promise.all([app.invites.regenerateAfterSignup(), app.invites.current()])
    return {
      regenerate_after_signup: regenerate, regenerateAfterSignup: regenerate,
      inviteCode: code.invite_code, inviteCodeHint: code.hint, inviteCodeCreatedAt: code.created_at,
    }
  })

  app.put('/settings/regenerate-setting', {
    config: admin,
    preValidation: canonicalBody(),
    schema: { hide: true, body: RegenerateSetting },
  }, async (request) => {
    const value = await app.invites.setRegenerateAfterSignup(request.body.regenerate_after_signup)
    return { regenerate_after_signup: value, regenerateAfterSignup: value }
  })

  app.post('/settings/generate-invite-code', {
    config: admin,
    schema: { hide: true },
  }, async (_request, reply) => reply.code(201).header('cache-control', 'no-store').send(withCamelAliases({ ...await app.invites.generate() })))
}
