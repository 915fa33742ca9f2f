// Chat services' incoming webhooks reject our JSON envelope: each wants its own message shape. The URL's
// host says which (https only: a look-alike path or plain http is a generic receiver):
//   Slack   hooks.slack.com                          {text, blocks}   (slack.ts)
//   Discord discord.com / discordapp.com (and ptb./canary.)  {content}        (2,000 characters at most)
//   Teams   *.webhook.office.com, outlook.office(365).com (Office 365 connectors),
//           *.logic.azure.com / *.api.powerplatform.com (Power Automate workflows)  {text}
// Everything else gets the envelope (envelope.ts). Deliveries are signed whatever the shape.
import type { DeliveredNotification } from '../../../repositories/notification-deliveries.ts'
import { slackMessage } from './slack.ts'

export const CHANNEL_FORMATS = ['envelope', 'slack', 'discord', 'teams'] as const
export type ChannelFormat = typeof CHANNEL_FORMATS[number]

const HOSTS: Array<[Exclude<ChannelFormat, 'envelope'>, RegExp]> = [
  ['slack', /^hooks\.slack\.com$/],
  ['discord', /^(?:(?:ptb|canary)\.)?discord(?:app)?\.com$/],
  ['teams', /(?:^|\.)(?:webhook\.office\.com|outlook\.office\.com|outlook\.office365\.com|logic\.azure\.com|api\.powerplatform\.com)$/],
]

/** The message shape deliveries to `rawUrl` take. */
export function channelFormat(rawUrl: string): ChannelFormat {
  let url: URL
  try { url = new URL(rawUrl) } catch { return 'envelope' }
  if (url.protocol !== 'https:') return 'envelope'
  const host = url.hostname.toLowerCase()
  return HOSTS.find(([, re]) => re.test(host))?.[0] ?? 'envelope'
}

/** Discord's limit on `content`. */
const DISCORD_MAX = 2000

/** A chat service's message for the notification; `link` is the subject's absolute URL. */
export function chatMessage(format: Exclude<ChannelFormat, 'envelope'>, n: DeliveredNotification, link: string): object {
  if (format === 'slack') return slackMessage(n, link)
  const line = `${n.title}: ${n.message}`
  if (format === 'discord') {
    // Discord reads markdown and pings on mentions: the text is sent without mention parsing.
    const content = `**${n.title}**\n${n.message}\n${link}`
    return { content: content.length > DISCORD_MAX ? `${content.slice(0, DISCORD_MAX - 1)}…` : content, allowed_mentions: { parse: [] } }
  }
  return { text: `${line}\n\n${link}` }
}
