// What a delivery POSTs, built anew for each attempt (so `sent_at` is that attempt's time):
//   generic receivers: {id, type, notification: {id, type, title, message, link, url, created_at}, sent_at}
//     `id` is the delivery's id, the same on every retry (also X-Delivery-Id): receivers de-duplicate on it;
//     `url` is the subject's absolute address (PUBLIC_URL + link).
//   Slack, Discord and Teams incoming webhooks: their own message shapes (chat-formats.ts).
// Headers: Content-Type, User-Agent, X-Delivery-Id, and X-Signature-256 over the exact bytes sent.
import type { DeliveredNotification } from '../../../repositories/notification-deliveries.ts'
import { SIGNATURE_HEADER, signBody } from './signing.ts'
import { channelFormat, chatMessage } from './chat-formats.ts'

export const USER_AGENT = 'cluster-workflow-orchestrator-webhooks/1'

export interface Envelope { body: string; headers: Record<string, string> }

export function absoluteLink(publicUrl: string, link: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${link}`
}

export function buildEnvelope(input: { deliveryId: string; url: string; secret: string; notification: DeliveredNotification; publicUrl: string; now: Date }): Envelope {
  const { deliveryId, notification: n } = input
  const url = absoluteLink(input.publicUrl, n.link)
  const format = channelFormat(input.url)
  const payload = format !== 'envelope'
    ? chatMessage(format, n, url)
    : { id: deliveryId, type: n.type, notification: { ...n, url }, sent_at: input.now.toISOString() }
  const body = JSON.stringify(payload)
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-delivery-id': deliveryId,
      [SIGNATURE_HEADER]: signBody(input.secret, body),
    },
  }
}
