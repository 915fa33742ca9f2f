// Settings (admin only: plugins/auth.ts requires the role for everything under /v1/api/settings).
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { InviteCode, InviteCodeStatus, RegenerateSetting } from '../../../schemas/settings.ts'

export default async function settingsRoutes(app: App) {
  const config = { requireAdmin: true }

  app.get('/invite-code', {
    config,
    schema: {
      tags: ['settings'], operationId: 'getInviteCode', summary: 'which invite code is current (its last characters and date)',
      description: 'The code itself is shown once, in the reply of POST /settings/generate-invite-code (as GitHub shows a new token), and stored only as a hash: here `invite_code` is always null, `hint` holds its last 4 characters. A lost code cannot be read back; generate a new one (the old one stops working).',
      response: { 200: InviteCodeStatus, ...errorResponses(401, 403) },
    },
  }, async (_request, reply) => {
    reply.header('cache-control', 'no-store')
    return app.invites.current()
  })

  app.post('/generate-invite-code', {
    config,
    schema: {
      tags: ['settings'], operationId: 'generateInviteCode', summary: 'replace the invite code with a new one',
      description: 'The reply is the only time the new code is shown in full: the service stores its hash. The previous code stops working at once.',
      response: { 201: InviteCode, ...errorResponses(401, 403) },
    },
  }, async (_request, reply) => reply.code(201).header('cache-control', 'no-store').send(await app.invites.generate()))

  app.get('/regenerate-setting', {
    config,
    schema: {
      tags: ['settings'], operationId: 'getRegenerateSetting', summary: 'whether each signup rotates the invite code',
      response: { 200: RegenerateSetting, ...errorResponses(401, 403) },
    },
  }, async () => ({ regenerate_after_signup: await app.invites.regenerateAfterSignup() }))

  app.put('/regenerate-setting', {
    config,
    schema: {
      tags: ['settings'], operationId: 'updateRegenerateSetting', summary: 'turn invite-code rotation after each signup on or off',
      body: RegenerateSetting,
      response: { 200: RegenerateSetting, ...errorResponses(400, 401, 403) },
    },
  }, async (request) => ({ regenerate_after_signup: await app.invites.setRegenerateAfterSignup(request.body.regenerate_after_signup) }))
}
