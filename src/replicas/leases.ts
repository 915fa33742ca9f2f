// The `leases` and `replicas` collections (API.md §11 "Watch ownership"). One lease per cluster names the
// replica that watches it; `epoch` grows by one every time the lease changes holder, and the status writes
// of the holder carry it (the resource records refuse a lower one), so a replica that lost its lease
// without noticing cannot overwrite its successor. The registry of live replicas tells each one its fair
// share of the clusters.
//
// A lease is never deleted while its cluster exists: its epoch must keep growing, and a deleted lease
// re-created at epoch 1 would let a stale holder's epoch win again. Both collections are read and written
// with single-document atomic operations only (conditional updates and a unique `_id` on insert), so any
// number of replicas may race for the same lease and exactly one wins.
import type { Collection, Db } from 'mongodb'
import { isDuplicateKey } from '../repositories/errors.ts'

export interface LeaseDoc {
  /** The cluster's id. */
  _id: string
  /** The replica watching it; null once released. */
  holder: string | null
  epoch: number
  expires_at: Date
}

export interface ReplicaDoc { _id: string; expires_at: Date }

export interface HeldLease { cluster_id: string; epoch: number }

export async function leaseIndexes(db: Db): Promise<void> {
  await db.collection<LeaseDoc>('leases').createIndex({ holder: 1 })
  // Registry entries of replicas gone for good are removed by the server; liveness is judged by
  // `expires_at`, never by whether the entry is still there (the sweep runs late).
  await db.collection<ReplicaDoc>('replicas').createIndex({ expires_at: 1 }, { expireAfterSeconds: 3600 })
}

export class LeaseRepository {
  private readonly leases: Collection<LeaseDoc>
  private readonly replicas: Collection<ReplicaDoc>
  constructor(db: Db) {
    this.leases = db.collection<LeaseDoc>('leases')
    this.replicas = db.collection<ReplicaDoc>('replicas')
  }

  /** Marks the replica alive until `until`. */
  async heartbeat(replicaId: string, until: Date): Promise<void> {
    await this.replicas.updateOne({ _id: replicaId }, { $set: { expires_at: until } }, { upsert: true })
  }

  /** Replicas whose registration has not expired at `now` (the caller counts itself among them once registered). */
  async liveReplicas(now: Date): Promise<number> {
    return this.replicas.countDocuments({ expires_at: { $gt: now } })
  }

  async unregister(replicaId: string): Promise<void> {
    await this.replicas.deleteOne({ _id: replicaId })
  }

  /**
   * Extends every lease the replica still holds to `until` and answers them. A lease another replica took
   * meanwhile no longer names this one, so it is neither extended nor answered.
   */
  async renew(holder: string, until: Date): Promise<HeldLease[]> {
    await this.leases.updateMany({ holder }, { $set: { expires_at: until } })
    const docs = await this.leases.find({ holder, expires_at: until }).toArray()
    return docs.map((d) => ({ cluster_id: d._id, epoch: d.epoch }))
  }

  /** Every lease (a few per cluster registered: small). */
  async all(): Promise<LeaseDoc[]> {
    return this.leases.find({}).toArray()
  }

  /**
   * Takes the cluster's lease if it is free (never held, released, or expired at `now`), with the next
   * epoch; null when another replica holds it. Atomic: of any number of racing callers, one wins.
   */
  async acquire(clusterId: string, holder: string, now: Date, until: Date): Promise<HeldLease | null> {
    const taken = await this.leases.findOneAndUpdate(
      { _id: clusterId, $or: [{ holder: null }, { expires_at: { $lte: now } }] },
      { $set: { holder, expires_at: until }, $inc: { epoch: 1 } },
      { returnDocument: 'after' },
    )
    if (taken) return taken.holder === holder ? { cluster_id: clusterId, epoch: taken.epoch } : null
    try {
      await this.leases.insertOne({ _id: clusterId, holder, epoch: 1, expires_at: until })
      return { cluster_id: clusterId, epoch: 1 }
    } catch (err) {
      // Someone holds it (or inserted it first).
      if (isDuplicateKey(err)) return null
      throw err
    }
  }

  /** Hands the lease back if the replica still holds it; the next holder takes it with the next epoch. */
  async release(clusterId: string, holder: string): Promise<boolean> {
    const res = await this.leases.updateOne({ _id: clusterId, holder }, { $set: { holder: null, expires_at: new Date(0) } })
    return res.modifiedCount === 1
  }

  /** Hands back every lease the replica holds (shutdown). */
  async releaseAll(holder: string): Promise<number> {
    const res = await this.leases.updateMany({ holder }, { $set: { holder: null, expires_at: new Date(0) } })
    return res.modifiedCount
  }

  /** The lease of a cluster that no longer exists: nothing will ever watch it again. */
  async forget(clusterId: string, holder: string): Promise<void> {
    await this.leases.deleteOne({ _id: clusterId, holder })
  }
}
