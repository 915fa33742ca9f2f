// Notification channels (API.md §12): a user's webhooks, fed by their notifications.
//
// A notification stored on this replica (`notification.created` on its bus) becomes one delivery record
// per enabled channel of its owner that takes its type (a channel with no types takes every type). The
// records are the queue (delivery-worker.ts): each is POSTed, signed with the channel's secret
// (envelope.ts, signing.ts), through the outbound policy on every hop (webhook-post.ts), and tried at most
// MAX_TRIES times, WEBHOOK_RETRY_BASE_MS × 2^(n-1) apart. Every attempt is recorded on the record.
//
// The secret is write-only: sealed at rest against the channel id, opened only to sign, never returned
// except once when the server generated it, never logged.
import { EventEmitter } from 'eventemitter3'
import { BadRequest, Conflict, NotFound } from '../../../errors.ts'
import type { EventBus, BusEvents } from '../../../events/bus.ts'
import type { Sealer } from '../../../crypto/sealer.ts'
import type { OutboundPolicy } from '../../../net/outbound-policy.ts'
import { newId } from '../../../repositories/ids.ts'
import type { Page, PageRequest } from '../../../repositories/pagination.ts'
import type { ChannelChanges, ChannelDoc, NotificationChannelRepository } from '../../../repositories/notification-channels.ts'
import { toDelivery, type Claimed, type DeliveredNotification, type Delivery, type DeliveryDoc, type NotificationDeliveryRepository } from '../../../repositories/notification-deliveries.ts'
import type { Notification } from '../../../repositories/notifications.ts'
import type { DeliveryStatus, NotificationType } from '../../../../schemas/notifications.ts'
import { DeliveryWorker } from './delivery-worker.ts'
import { buildEnvelope } from './envelope.ts'
import { generateSecret } from './signing.ts'
import { channelFormat, type ChannelFormat } from './chat-formats.ts'
import { postWebhook } from './webhook-post.ts'

/** Tries in all, the first included. */
export const MAX_TRIES = 3
/** Attempts under way at once on one replica. */
const CONCURRENCY = 8

export interface Channel {
  id: string; name: string; url: string; events: NotificationType[]; enabled: boolean; has_secret: boolean; format: ChannelFormat
  created_at: string; updated_at: string
}

/** A channel as create (and a secret rotation) answers it: with the secret when the server generated it. */
export type ChannelWithSecret = Channel & { secret?: string }

export interface CreateChannelInput { name: string; url: string; events: NotificationType[]; secret?: string; enabled?: boolean }
export interface UpdateChannelInput { name?: string; url?: string; events?: NotificationType[]; secret?: string; rotate_secret?: boolean; enabled?: boolean }

export const toChannel = (d: ChannelDoc): Channel => ({
  id: d._id, name: d.name, url: d.url, events: d.events, enabled: d.enabled, has_secret: Boolean(d.secret_sealed), format: channelFormat(d.url),
  created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString(),
})

export interface NotificationChannelServiceDeps {
  channels: NotificationChannelRepository
  deliveries: NotificationDeliveryRepository
  /** The stored notification (owner-scoped), or null when it is gone. */
  notification(ownerId: string, id: string): Promise<Notification | null>
  bus: EventBus
  sealer: Sealer
  policy: OutboundPolicy
  log: { error(obj: object, msg: string): void }
  config: {
    timeoutMs: number
    retryBaseMs: number
    maxChannels: number
    pollMs: number
    /** Absolute links in deliveries: PUBLIC_URL + the notification's API path. */
    publicUrl: string
  }
  now?: () => number
}

interface AttemptEvents { attempt: (delivery: Delivery) => void }

export class NotificationChannelService {
  /** Every attempt recorded on this replica, as the deliveries list shows it (tests await these). */
  readonly attempts = new EventEmitter<AttemptEvents>()
  private readonly worker: DeliveryWorker
  private readonly now: () => number
  private readonly claimMs: number
  private readonly pending = new Set<Promise<void>>()
  private readonly offs: Array<() => void> = []

  constructor(private readonly deps: NotificationChannelServiceDeps) {
    this.now = deps.now ?? Date.now
    // An attempt takes at most timeoutMs (every hop included); the rest covers the database round trips,
    // so a live replica's claim never expires under it.
    this.claimMs = deps.config.timeoutMs * 2 + 1000
    this.worker = new DeliveryWorker({
      deliveries: deps.deliveries, attempt: (claimed, signal) => this.attempt(claimed, signal).then(() => undefined),
      claimMs: this.claimMs, pollMs: deps.config.pollMs, concurrency: CONCURRENCY, log: deps.log, now: this.now,
    })
    this.offs.push(deps.bus.on('notification.created', (e) => this.track(this.enqueue(e))))
  }

  // Channels (routes, and the KubeOrch UI adapter)

  async list(ownerId: string, page: PageRequest): Promise<Page<Channel>> {
    const res = await this.deps.channels.list(ownerId, page)
    return { ...res, items: res.items.map(toChannel) }
  }

  async get(ownerId: string, id: string): Promise<Channel> {
    return toChannel(await this.doc(ownerId, id))
  }

  /** 409 past the per-user limit or on a duplicate name; without `secret`, one is generated and returned this once. */
  async create(ownerId: string, input: CreateChannelInput): Promise<ChannelWithSecret> {
    const url = this.checkUrl(input.url)
    const { maxChannels } = this.deps.config
    if (await this.deps.channels.count(ownerId) >= maxChannels) throw this.tooMany()
    const id = this.deps.channels.newId()
    const generated = input.secret === undefined ? generateSecret() : undefined
    const doc = await this.deps.channels.create(id, ownerId, {
      name: input.name.trim(), url, events: input.events, enabled: input.enabled ?? true,
      secret_sealed: this.seal(id, input.secret ?? generated!),
    })
    // Two creates racing past the count both land; the one over the limit is taken back.
    if (await this.deps.channels.count(ownerId) > maxChannels) {
      await this.deps.channels.delete(ownerId, id)
      throw this.tooMany()
    }
    return { ...toChannel(doc), ...(generated && { secret: generated }) }
  }

  /** Only the fields given change; `rotate_secret` generates a new secret, returned this once. */
  async update(ownerId: string, id: string, input: UpdateChannelInput): Promise<ChannelWithSecret> {
    if (input.secret !== undefined && input.rotate_secret) throw new BadRequest('give either secret or rotate_secret, not both')
    const current = await this.doc(ownerId, id)
    const changes: ChannelChanges = {}
    if (input.name !== undefined) changes.name = input.name.trim()
    if (input.url !== undefined) changes.url = this.checkUrl(input.url)
    if (input.events !== undefined) changes.events = input.events
    if (input.enabled !== undefined) changes.enabled = input.enabled
    const generated = input.rotate_secret ? generateSecret() : undefined
    const secret = input.secret ?? generated
    if (secret !== undefined) changes.secret_sealed = this.seal(current._id, secret)
    const doc = await this.deps.channels.update(ownerId, id, changes)
    if (!doc) throw new NotFound('channel')
    return { ...toChannel(doc), ...(generated && { secret: generated }) }
  }

  /** The channel and its deliveries (nothing pending is sent for it afterwards). */
  async delete(ownerId: string, id: string): Promise<void> {
    if (!await this.deps.channels.delete(ownerId, id)) throw new NotFound('channel')
    await this.deps.deliveries.deleteForChannel(ownerId, id)
  }

  /**
   * Sends a synthetic notification (type `test`) through the same path as real ones, whether the channel is
   * enabled or not, and answers the record after its first attempt (bounded by WEBHOOK_TIMEOUT_MS):
   * delivered, failed, or pending with its retry scheduled when the receiver asked for one.
   */
  async test(ownerId: string, id: string): Promise<Delivery> {
    const channel = await this.doc(ownerId, id)
    const at = new Date(this.now())
    const notification: DeliveredNotification = {
      id: newId(), type: 'test', title: `Test of channel ${channel.name}`,
      message: 'a test delivery: this channel receives notifications', link: `/v1/api/notifications/channels/${channel._id}`, created_at: at.toISOString(),
    }
    const claimed = await this.deps.deliveries.enqueueClaimed({ owner_id: ownerId, channel_id: channel._id, type: 'test', test: true, notification }, this.claimMs, at)
    await this.worker.run(claimed)
    return toDelivery(await this.deps.deliveries.get(ownerId, claimed.doc._id) ?? claimed.doc)
  }

  /** A channel's deliveries, newest first (404 for a channel that is not the caller's). */
  async deliveries(ownerId: string, channelId: string, page: PageRequest, opts: { status?: DeliveryStatus } = {}): Promise<Page<Delivery>> {
    await this.doc(ownerId, channelId)
    return this.deps.deliveries.list(ownerId, channelId, page, opts)
  }

  // Lifecycle

  /** Starts this replica's worker (once serving): pending records, a restart's included, are sent from now on. */
  start(): void {
    this.worker.start()
  }

  /** Stops listening, waits for the records being queued, and stops the worker (attempts under way give their records back). */
  async close(): Promise<void> {
    for (const off of this.offs.splice(0)) off()
    while (this.pending.size) await Promise.all(this.pending)
    await this.worker.close()
  }

  /** Resolves when every notification heard so far is queued and no attempt is under way here (tests). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending)
    await this.worker.idle()
  }

  // Internals

  private async doc(ownerId: string, id: string): Promise<ChannelDoc> {
    const doc = await this.deps.channels.get(ownerId, id)
    if (!doc) throw new NotFound('channel')
    return doc
  }

  private tooMany(): Conflict {
    return new Conflict(`you have ${this.deps.config.maxChannels} notification channels, the most one user may have`)
  }

  /** Scheme, no credentials, no refused literal address; a name is checked at every connection (it may move). */
  private checkUrl(raw: string): string {
    return this.deps.policy.checkFormat(raw.trim(), 'url').href
  }

  private context(id: string): string { return `notification_channels:${id}` }

  private seal(id: string, secret: string): string { return this.deps.sealer.seal(secret, this.context(id)) }

  private track(work: Promise<void>): void {
    const p = work.catch((err: unknown) => {
      this.deps.log.error({ err: { name: (err as Error)?.name } }, 'webhook deliveries could not be queued')
    }).finally(() => { this.pending.delete(p) })
    this.pending.add(p)
  }

  private async enqueue(e: BusEvents['notification.created']): Promise<void> {
    const channels = (await this.deps.channels.enabled(e.owner_id)).filter((c) => !c.events.length || c.events.includes(e.type as NotificationType))
    if (!channels.length) return
    const n = await this.deps.notification(e.owner_id, e.notification_id)
    if (!n) return
    const notification: DeliveredNotification = { id: n.id, type: n.type, title: n.title, message: n.message, link: n.link, created_at: n.created_at }
    await this.deps.deliveries.enqueue(channels.map((c) => ({ owner_id: e.owner_id, channel_id: c._id, type: n.type, test: false, notification })), new Date(this.now()))
    this.worker.poke()
  }

  /** One attempt of a claimed record, recorded; null when the claim was lost or given back. */
  private async attempt(claimed: Claimed, signal: AbortSignal): Promise<DeliveryDoc | null> {
    const { doc } = claimed
    const channel = await this.deps.channels.get(doc.owner_id, doc.channel_id)
    const at = new Date(this.now())
    const skip = !channel ? 'the channel was deleted' : !channel.enabled && !doc.test ? 'the channel was disabled' : null
    if (skip || !channel) {
      return this.recorded(await this.deps.deliveries.record(claimed, { attempt: { at, status_code: null, error: skip, duration_ms: 0, redirects: 0 }, status: 'failed', next_at: null }, at))
    }
    let secret: string
    try {
      secret = this.deps.sealer.open<string>(channel.secret_sealed, this.context(channel._id))
    } catch {
      // Sealed with a key this server no longer has: no try could sign it, so it fails now, not at every claim expiry.
      const error = 'the channel secret cannot be opened (the encryption key changed): set a new secret'
      return this.recorded(await this.deps.deliveries.record(claimed, { attempt: { at, status_code: null, error, duration_ms: 0, redirects: 0 }, status: 'failed', next_at: null }, at))
    }
    const envelope = buildEnvelope({ deliveryId: doc._id, url: channel.url, secret, notification: doc.notification, publicUrl: this.deps.config.publicUrl, now: at })
    const result = await postWebhook(channel.url, envelope.body, envelope.headers, { policy: this.deps.policy, timeoutMs: this.deps.config.timeoutMs, signal })
    if (result.aborted) {
      await this.deps.deliveries.release(claimed, new Date(this.now()))
      return null
    }
    const tries = doc.attempts.length + 1
    const retry = result.outcome === 'retry' && tries < MAX_TRIES
    const nextAt = retry ? new Date(this.now() + this.deps.config.retryBaseMs * 2 ** (tries - 1)) : null
    const status: DeliveryStatus = result.outcome === 'delivered' ? 'delivered' : retry ? 'pending' : 'failed'
    const attempt = { at, status_code: result.status_code, error: result.error, duration_ms: result.duration_ms, redirects: result.redirects }
    const saved = await this.deps.deliveries.record(claimed, { attempt, status, next_at: nextAt }, new Date(this.now()))
    if (saved && nextAt) this.worker.wakeAt(nextAt.getTime())
    return this.recorded(saved)
  }

  private recorded(doc: DeliveryDoc | null): DeliveryDoc | null {
    if (doc) this.attempts.emit('attempt', toDelivery(doc))
    return doc
  }
}
