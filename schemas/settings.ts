// Settings group (admin only): the invite code and whether each signup rotates it.
import { Type } from 'typebox'
import { Timestamp } from './common.ts'

export const InviteCode = Type.Object({
  invite_code: Type.String({ minLength: 10, description: 'random code that lets one person register' }),
  created_at: Timestamp,
}, { additionalProperties: false })

export const RegenerateSetting = Type.Object({
  regenerate_after_signup: Type.Boolean({ description: 'true: a new invite code is generated after each signup that used one' }),
}, { additionalProperties: false })
