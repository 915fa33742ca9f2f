import { Type } from 'typebox'

export const HealthResponse = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  uptime_seconds: Type.Number({ minimum: 0 }),
}, { additionalProperties: false })

export const ReadyResponse = Type.Object({
  status: Type.Literal('ready'),
  database: Type.Literal('ok'),
}, { additionalProperties: false })
