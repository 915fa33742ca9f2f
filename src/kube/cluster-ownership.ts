// Which clusters this replica watches (API.md §11 "Watch ownership"). One process alone owns every cluster
// (SingleOwnership: writes unfenced, exactly as before replicas). Among several replicas each cluster has
// one holder through its lease (LeasedOwnership, src/replicas/leases.ts): the holder alone watches it,
// stores what its watches derive and runs its health check.
//
// The holder counts a lease as its own only until the expiry it wrote, measured from before the write was
// sent: by then another replica may have taken it, so it stops writing even when the database is out of
// reach and it cannot learn whether it still holds it. Clocks of the replicas are assumed to agree to well
// within a TTL; the epoch on every status write covers the rest (a record refuses a lower epoch).
import { EventEmitter } from 'node:events'
import type { HeldLease, LeaseRepository } from '../replicas/leases.ts'

export type OwnershipListener = (clusterId: string) => void

export interface ClusterOwnership {
  owns(clusterId: string): boolean
  /** The fencing token of this replica's lease on the cluster; null: unfenced (a single replica), or not held. */
  epoch(clusterId: string): number | null
  /** The clusters held now; null: every cluster (a single replica). */
  ownedClusters(): string[] | null
  /** The cluster became this replica's (its watches should list it again and resume). */
  onGained(fn: OwnershipListener): () => void
  /** The cluster is no longer this replica's (its watches should stop writing, and stop). */
  onLost(fn: OwnershipListener): () => void
  start(): Promise<void>
  /** Something changed (a cluster registered or deleted): look again soon rather than at the next renewal. */
  poke(): void
  /** Shutdown: hands every lease back at once, so other replicas take over without waiting for a TTL. */
  release(): Promise<void>
  /** Stops renewing, without handing anything back (what a crash amounts to, for tests). */
  stop(): Promise<void>
}

const noop = () => undefined

/** The only replica: owns every cluster, forever, unfenced. */
export class SingleOwnership implements ClusterOwnership {
  owns(_clusterId: string): boolean { return true }
  epoch(_clusterId: string): number | null { return null }
  ownedClusters(): string[] | null { return null }
  onGained(): () => void { return noop }
  onLost(): () => void { return noop }
  async start(): Promise<void> {}
  poke(): void {}
  async release(): Promise<void> {}
  async stop(): Promise<void> {}
}

export interface LeasedOwnershipDeps {
  leases: Pick<LeaseRepository, 'heartbeat' | 'liveReplicas' | 'unregister' | 'renew' | 'all' | 'acquire' | 'release' | 'releaseAll' | 'forget'>
  replicaId: string
  ttlMs: number
  /** Every registered cluster's id. */
  clusterIds(): Promise<string[]>
  log?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void }
  now?: () => number
  /** Told once this replica's leases are back (shutdown), so the other replicas can be told to take them now. */
  onReleased?: () => void
}

interface Held { epoch: number; until: number }

/**
 * Holds up to a fair share of the clusters' leases: ceil(clusters / live replicas). Every TTL/3 it marks
 * itself alive, renews what it holds, hands back what is over its share (another replica takes it at its
 * next round), and takes free or expired leases up to its share. When another replica's lease is due to
 * expire before the next round, it looks again right then, so a replica that stopped renewing loses its
 * clusters within one TTL of its last renewal (plus one round's database trips).
 */
export class LeasedOwnership implements ClusterOwnership {
  private held = new Map<string, Held>()
  /** Clusters announced as gained and not yet as lost, with the epoch they were gained with. */
  private readonly announced = new Map<string, number>()
  private readonly events = new EventEmitter()
  private tickTimer: NodeJS.Timeout | undefined
  private expiryTimer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private again = false
  private stopped = false
  private readonly now: () => number

  constructor(private readonly deps: LeasedOwnershipDeps) {
    this.now = deps.now ?? Date.now
    this.events.setMaxListeners(0)
  }

  owns(clusterId: string): boolean {
    const h = this.held.get(clusterId)
    return h !== undefined && h.until > this.now()
  }

  epoch(clusterId: string): number | null {
    return this.owns(clusterId) ? this.held.get(clusterId)!.epoch : null
  }

  ownedClusters(): string[] {
    return [...this.held.keys()].filter((c) => this.owns(c)).sort()
  }

  onGained(fn: OwnershipListener): () => void { this.events.on('gained', fn); return () => { this.events.off('gained', fn) } }
  onLost(fn: OwnershipListener): () => void { this.events.on('lost', fn); return () => { this.events.off('lost', fn) } }

  /** Takes its share before resolving, so whoever starts next knows what this replica watches. */
  async start(): Promise<void> {
    this.stopped = false
    await this.round()
  }

  /** Settles when the round it asked for is done (tests). */
  poke(): Promise<void> {
    return this.stopped ? Promise.resolve() : this.round()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.clearTimers()
    await this.running
    this.drop([...this.announced.keys()])
    this.held.clear()
  }

  async release(): Promise<void> {
    // Stop writing first, then hand back: the successor never overlaps with this replica's writes.
    await this.stop()
    try {
      await this.deps.leases.releaseAll(this.deps.replicaId)
      await this.deps.leases.unregister(this.deps.replicaId)
      this.deps.onReleased?.()
    } catch (err) {
      // They expire within a TTL instead.
      this.deps.log?.warn({ err: { message: String((err as Error)?.message ?? err) } }, 'leases: handing the cluster leases back failed')
    }
  }

  /** One round at a time; a round asked for while one runs follows it. */
  private round(): Promise<void> {
    if (this.running) { this.again = true; return this.running }
    this.running = (async () => {
      do {
        this.again = false
        let wake = Math.floor(this.deps.ttlMs / 3)
        try {
          wake = Math.min(wake, await this.tick())
        } catch (err) {
          this.deps.log?.warn({ err: { message: String((err as Error)?.message ?? err) } }, 'leases: renewing the cluster leases failed')
        }
        if (this.stopped) break
        this.schedule(Math.max(1, wake))
      } while (this.again && !this.stopped)
      this.running = undefined
    })()
    return this.running
  }

  /** Renews, trims to the share, takes up to it; answers in how many ms it wants to look again at the latest. */
  private async tick(): Promise<number> {
    const { leases, replicaId: me, ttlMs } = this.deps
    const started = this.now()
    const until = new Date(started + ttlMs)
    await leases.heartbeat(me, until)
    const next = new Map<string, Held>()
    const keep = (l: HeldLease) => { next.set(l.cluster_id, { epoch: l.epoch, until: started + ttlMs }) }
    for (const l of await leases.renew(me, until)) keep(l)
    if (this.stopped) return ttlMs
    // What renewing proved is applied at once: a lease another replica took is not this one's any more.
    this.apply(next)
    const [clusters, all, live] = await Promise.all([this.deps.clusterIds(), leases.all(), leases.liveReplicas(new Date(started))])
    const exists = new Set(clusters)
    for (const id of [...next.keys()]) {
      if (exists.has(id)) continue
      await leases.forget(id, me)
      next.delete(id)
    }
    const share = Math.ceil(clusters.length / Math.max(1, live))
    if (next.size > share) {
      const extra = [...next.keys()].sort().slice(share)
      // Not ours from before the write: the next holder may take it as soon as it lands.
      for (const id of extra) next.delete(id)
      this.apply(next)
      for (const id of extra) await leases.release(id, me)
    }
    const byId = new Map(all.map((l) => [l._id, l]))
    const now = new Date(this.now())
    let wake = Infinity
    if (next.size < share) {
      for (const id of clusters) {
        if (next.size >= share || this.stopped) break
        if (next.has(id)) continue
        const l = byId.get(id)
        if (l && l.holder !== null && l.holder !== me && l.expires_at > now) continue
        const got = await leases.acquire(id, me, now, until)
        if (got) keep(got)
      }
    }
    // Look again as soon as another replica's lease is due to expire: one renewed on time is always more than
    // a renewal period away, so this only matters for a replica that stopped (its share then falls to the rest).
    for (const l of all) {
      if (l.holder !== null && l.holder !== me && !next.has(l._id) && exists.has(l._id)) wake = Math.min(wake, l.expires_at.getTime() - this.now() + 1)
    }
    if (this.stopped) return ttlMs
    this.apply(next)
    return wake
  }

  /** Makes `next` what is held, announcing what was lost and what was gained. */
  private apply(next: Map<string, Held>): void {
    const now = this.now()
    // Expired before this renewal, even if nobody took it: writes were skipped meanwhile, so it is lost and
    // gained again (its watches list again rather than trust what they kept).
    const lapsed = new Set([...this.held].filter(([, h]) => h.until <= now).map(([id]) => id))
    this.held = new Map(next)
    const lost = [...this.announced].filter(([id, epoch]) => lapsed.has(id) || this.held.get(id)?.epoch !== epoch || !this.owns(id)).map(([id]) => id)
    this.drop(lost)
    for (const [id, h] of this.held) {
      if (this.announced.has(id) || !this.owns(id)) continue
      this.announced.set(id, h.epoch)
      this.emit('gained', id)
    }
    this.armExpiry()
  }

  private drop(ids: string[]): void {
    for (const id of ids) {
      if (!this.announced.delete(id)) continue
      if (this.held.get(id) && !this.owns(id)) this.held.delete(id)
      this.emit('lost', id)
    }
  }

  private emit(what: 'gained' | 'lost', id: string): void {
    try {
      this.events.emit(what, id)
    } catch (err) {
      this.deps.log?.warn({ cluster_id: id, err: { message: String((err as Error)?.message ?? err) } }, `leases: a listener of a ${what} cluster failed`)
    }
  }

  private schedule(ms: number): void {
    clearTimeout(this.tickTimer)
    this.tickTimer = setTimeout(() => { void this.round() }, ms)
    this.tickTimer.unref?.()
  }

  /** A round that cannot renew in time (the database out of reach) must not leave the leases counted as held. */
  private armExpiry(): void {
    clearTimeout(this.expiryTimer)
    if (this.stopped || !this.announced.size) return
    const first = Math.min(...[...this.announced.keys()].map((id) => this.held.get(id)?.until ?? 0))
    this.expiryTimer = setTimeout(() => {
      this.drop([...this.announced.keys()].filter((id) => !this.owns(id)))
      this.armExpiry()
    }, Math.max(1, first - this.now()))
    this.expiryTimer.unref?.()
  }

  private clearTimers(): void {
    clearTimeout(this.tickTimer)
    clearTimeout(this.expiryTimer)
    this.tickTimer = undefined
    this.expiryTimer = undefined
  }
}
