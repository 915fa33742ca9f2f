// The caller's own account.
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { ChangePasswordBody, UpdateProfileBody } from '../../../schemas/user.ts'
import { perUser } from '../auth/rate-limits.ts'

const User = Type.Ref('User')

export default async function profileRoutes(app: App) {
  app.get('/', {
    schema: {
      tags: ['profile'], operationId: 'getProfile', summary: 'get the current user',
      response: { 200: User, ...errorResponses(401) },
    },
  }, async (request) => app.users.get(request.user.id))

  app.put('/', {
    schema: {
      tags: ['profile'], operationId: 'updateProfile', summary: 'update the current user\'s name or picture',
      body: UpdateProfileBody,
      response: { 200: User, ...errorResponses(400, 401) },
    },
  }, async (request) => app.users.updateProfile(request.user.id, request.body))

  app.put('/password', {
    preHandler: perUser(app, 'password'),
    schema: {
      tags: ['profile'], operationId: 'changePassword', summary: 'change the current user\'s password',
      description: 'Needs the current password (400 when it is wrong, or when the account signs in only through an identity provider).',
      body: ChangePasswordBody,
      response: { 204: Type.Null({ description: 'changed' }), ...errorResponses(400, 401, 429) },
    },
  }, async (request, reply) => {
    await app.users.changePassword(request.user.id, request.body.current_password, request.body.new_password)
    return reply.code(204).send(null)
  })
}
