// The `cluster_logs` collection: connection events of each cluster (tests, health checks, credential
// changes), kept for 30 days.
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId } from './ids.ts'
import { paginate, type PageRequest, type Page } from './pagination.ts'

export type ConnectionAction = 'create' | 'test' | 'health_check' | 'refresh' | 'credentials' | 'update' | 'share' | 'watch'
interface LogDoc { _id: string; cluster_id: string; action: ConnectionAction; success: boolean; message: string; created_at: Date }
export interface ConnectionLog { id: string; action: ConnectionAction; success: boolean; message: string; created_at: string }

const RETENTION_S = 30 * 24 * 3600

indexSetups.push(async (db) => {
  const c = db.collection('cluster_logs')
  await c.createIndex({ cluster_id: 1, created_at: -1 })
  await c.createIndex({ created_at: 1 }, { expireAfterSeconds: RETENTION_S })
})

export class ClusterLogRepository {
  private readonly c: Collection<LogDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<LogDoc>('cluster_logs')
  }

  async add(clusterId: string, action: ConnectionAction, success: boolean, message: string): Promise<void> {
    await this.c.insertOne({ _id: newId(), cluster_id: clusterId, action, success, message, created_at: this.now() })
  }

  /** The caller must already have been granted access to `clusterId`. */
  async list(clusterId: string, req: PageRequest): Promise<Page<ConnectionLog>> {
    return paginate(this.c, req, { filter: { cluster_id: clusterId }, sortFields: { created_at: 'created_at' } },
      ({ _id, cluster_id: _c, created_at, ...rest }) => ({ id: _id, ...rest, created_at: created_at.toISOString() }))
  }

  async deleteForCluster(clusterId: string): Promise<void> {
    await this.c.deleteMany({ cluster_id: clusterId })
  }
}
