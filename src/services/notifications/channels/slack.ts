// Slack's message shape for its incoming webhooks (chat-formats.ts picks it by host), not our JSON envelope:
// `text` (the notification line, also what notifications and old clients show) and `blocks` (the same, laid out). Slack's mrkdwn treats &, < and > as markup, so user text is escaped.
import type { DeliveredNotification } from '../../../repositories/notification-deliveries.ts'

/** Slack's mrkdwn control characters, escaped as Slack documents. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

export interface SlackMessage {
  text: string
  blocks: Array<Record<string, unknown>>
}

/** `link` is the subject's absolute URL (PUBLIC_URL + the notification's API path). */
export function slackMessage(n: DeliveredNotification, link: string): SlackMessage {
  const title = escapeMrkdwn(n.title)
  const message = escapeMrkdwn(n.message)
  return {
    text: `${title}: ${message}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${title}*\n${message}` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${escapeMrkdwn(n.type)} · <${link}|${escapeMrkdwn(n.link)}>` }] },
    ],
  }
}
