// Settings group (admin only): the invite code (shown once, stored as a hash) and whether each signup rotates it.
import { Type } from 'typebox'
import { Timestamp } from './common.ts'

const Hint = Type.String({ minLength: 1, maxLength: 8, description: 'the last characters of the current code, to tell codes apart (the code itself is stored only as a hash)' })

/** POST /settings/generate-invite-code: the only reply that carries a code in full. */
export const InviteCode = Type.Object({
  invite_code: Type.String({ minLength: 10, description: 'random code that lets one person register; shown only in this reply (the service keeps a hash), so pass it on now' }),
  hint: Hint,
  created_at: Timestamp,
}, { additionalProperties: false })

/** GET /settings/invite-code: which code is current, never the code. */
export const InviteCodeStatus = Type.Object({
  invite_code: Type.Null({ description: 'always null: the code is shown once, when generated (POST /settings/generate-invite-code), and stored only as a hash' }),
  hint: Type.Union([Hint, Type.Null()], { description: 'the last characters of the current code; null when no code was generated yet' }),
  created_at: Type.Union([Timestamp, Type.Null()], { description: 'when the current code was generated; null when none was' }),
}, { additionalProperties: false })

export const RegenerateSetting = Type.Object({
  regenerate_after_signup: Type.Boolean({ description: 'true: a new invite code is generated after each signup that used one, so a code admits one person; the new code is shown to nobody (generate one to invite the next person)' }),
}, { additionalProperties: false })
