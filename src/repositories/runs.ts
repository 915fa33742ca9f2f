// The `workflow_runs` collection: the execution history of each workflow (API.md §3). Runs are written by
// the deploy service; this issue defines the record and its paginated history.
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId } from './ids.ts'
import { paginate, type PageRequest, type Page } from './pagination.ts'

export type RunStatus = 'pending' | 'running' | 'completed' | 'failed'
/** What started a run (API.md §12); records made before it existed read 'manual'. */
export type RunTrigger = 'manual' | 'sync' | 'auto_sync' | 'rollback'
export type NodeAction = 'created' | 'configured' | 'unchanged' | 'failed' | 'skipped'

export interface FieldChange { path: string; old?: unknown; new?: unknown }
export interface ObjectDiff { changed: FieldChange[]; added: FieldChange[]; removed: FieldChange[] }
/** `diff` only on dry runs: what the apply would change in the live object. */
export interface RunNodeResult { node_id: string; kind: string; name: string; namespace: string | null; action: NodeAction; message: string; diff?: ObjectDiff }

export interface RunDoc {
  _id: string
  owner_id: string
  workflow_id: string
  version: number
  cluster: string
  /** The cluster's id: the name may be renamed or reused, the id says where objects really went. */
  cluster_id: string
  namespace: string | null
  status: RunStatus
  dry_run: boolean
  started_at: Date
  finished_at: Date | null
  duration_ms: number | null
  triggered_by: string
  nodes: RunNodeResult[]
  logs: string[]
  error: string | null
  trigger?: RunTrigger
  /** A rollback's target version; null (or absent on old records) otherwise. */
  rollback_of?: number | null
  /**
   * Objects that reached the cluster (created, configured or unchanged by the apply), counted at the end.
   * A workload that then never became ready fails its node, yet it is deployed: lastDeployment needs this.
   * Internal, never shown.
   */
  applied_count?: number
  /** The process running it, and when that process last said it still is: how a restart tells a dead run from another replica's. Internal. */
  instance_id?: string
  heartbeat_at?: Date
}

export interface Run extends Omit<RunDoc, '_id' | 'owner_id' | 'started_at' | 'finished_at' | 'applied_count' | 'instance_id' | 'heartbeat_at' | 'trigger' | 'rollback_of'> {
  id: string; started_at: string; finished_at: string | null; trigger: RunTrigger; rollback_of: number | null
}

export const toRun = ({ _id, owner_id: _o, started_at, finished_at, applied_count: _applied, instance_id: _i, heartbeat_at: _h, ...rest }: RunDoc): Run => ({
  // Runs recorded before cluster_id existed name only their cluster.
  id: _id, ...rest, cluster_id: rest.cluster_id ?? '', trigger: rest.trigger ?? 'manual', rollback_of: rest.rollback_of ?? null, started_at: started_at.toISOString(), finished_at: finished_at ? finished_at.toISOString() : null,
})

indexSetups.push(async (db) => {
  const c = db.collection('workflow_runs')
  await c.createIndex({ owner_id: 1, workflow_id: 1, started_at: -1 })
  await c.createIndex({ owner_id: 1, started_at: -1 })
  // Start-up recovery looks for runs a dead process left unfinished.
  await c.createIndex({ status: 1 })
})

export const newRunId = newId

export type RunOutcome = Pick<RunDoc, 'status' | 'nodes' | 'logs' | 'error' | 'applied_count'> & { finished_at: Date; duration_ms: number }

export class RunRepository {
  private readonly c: Collection<RunDoc>
  constructor(db: Db) {
    this.c = db.collection<RunDoc>('workflow_runs')
  }

  /** `id` may be allocated beforehand (newRunId), so the version recorded for the run can name it. */
  async create(input: Omit<RunDoc, '_id'>, id: string = newId()): Promise<Run> {
    const doc: RunDoc = { _id: id, ...input }
    await this.c.insertOne(doc)
    return toRun(doc)
  }

  async get(ownerId: string, workflowId: string, runId: string): Promise<Run | null> {
    const doc = await this.c.findOne({ _id: runId, owner_id: ownerId, workflow_id: workflowId })
    return doc && toRun(doc)
  }

  /** Progress of a run still going: the node results and log so far (a crash keeps what was done). */
  async progress(runId: string, fields: Pick<RunDoc, 'nodes' | 'logs'>): Promise<void> {
    await this.c.updateOne({ _id: runId, status: { $in: ['pending', 'running'] } }, { $set: fields })
  }

  /** Records the end of a run; null when it had already ended (e.g. marked interrupted meanwhile). */
  async finish(runId: string, outcome: RunOutcome): Promise<Run | null> {
    const doc = await this.c.findOneAndUpdate({ _id: runId, status: { $in: ['pending', 'running'] } }, { $set: outcome }, { returnDocument: 'after' })
    return doc && toRun(doc)
  }

  /**
   * Fails a run another process abandoned, only if it is still as the sweep saw it: unfinished, of the same
   * process, with no heartbeat since. Of replicas sweeping at once exactly one matches (it alone notifies),
   * and a run whose process was only slow and has marked it alive again is left alone. Null when not matched.
   */
  async settleAbandoned(seen: Pick<RunDoc, '_id' | 'instance_id' | 'heartbeat_at'>, outcome: RunOutcome): Promise<Run | null> {
    const doc = await this.c.findOneAndUpdate({
      _id: seen._id, status: { $in: ['pending', 'running'] },
      // Runs recorded before instance_id and heartbeat_at existed have neither.
      instance_id: seen.instance_id ?? { $exists: false }, heartbeat_at: seen.heartbeat_at ?? { $exists: false },
    }, { $set: outcome }, { returnDocument: 'after' })
    return doc && toRun(doc)
  }

  /** Runs not finished: at start-up, those a dead process left behind. */
  async unfinished(): Promise<RunDoc[]> {
    return this.c.find({ status: { $in: ['pending', 'running'] } }).toArray()
  }

  /** Unfinished runs of other processes that have not said they are alive since `before` (or never did). */
  async abandoned(instanceId: string, before: Date): Promise<RunDoc[]> {
    return this.c.find({
      status: { $in: ['pending', 'running'] }, instance_id: { $ne: instanceId },
      $or: [{ heartbeat_at: { $lt: before } }, { heartbeat_at: { $exists: false } }],
    }).toArray()
  }

  /** This process's runs are alive. */
  async heartbeat(runIds: string[], at: Date): Promise<void> {
    if (runIds.length) await this.c.updateMany({ _id: { $in: runIds }, status: { $in: ['pending', 'running'] } }, { $set: { heartbeat_at: at } })
  }

  /** Every cluster the workflow was really deployed to (or among its `recent` runs), with the namespaces its objects went to there. */
  async deployments(ownerId: string, workflowId: string, options: { recent?: number } = {}): Promise<Array<{ cluster: string; cluster_id: string; namespaces: string[] }>> {
    const cursor = this.c.find({ owner_id: ownerId, workflow_id: workflowId, dry_run: false }, { projection: { cluster: 1, cluster_id: 1, namespace: 1, 'nodes.namespace': 1, started_at: 1 } })
      .sort({ started_at: -1 })
    const docs = await (options.recent ? cursor.limit(options.recent) : cursor).toArray()
    const byCluster = new Map<string, { cluster: string; cluster_id: string; namespaces: Set<string> }>()
    for (const d of docs) {
      if (!d.cluster_id) continue
      let entry = byCluster.get(d.cluster_id)
      if (!entry) { entry = { cluster: d.cluster, cluster_id: d.cluster_id, namespaces: new Set() }; byCluster.set(d.cluster_id, entry) }
      if (d.namespace) entry.namespaces.add(d.namespace)
      for (const n of d.nodes ?? []) if (n.namespace) entry.namespaces.add(n.namespace)
    }
    return [...byCluster.values()].map((e) => ({ cluster: e.cluster, cluster_id: e.cluster_id, namespaces: [...e.namespaces].sort() }))
  }

  async list(ownerId: string, workflowId: string, req: PageRequest, filter: { status?: RunStatus } = {}): Promise<Page<Run>> {
    return paginate(this.c, req, {
      filter: { owner_id: ownerId, workflow_id: workflowId, ...(filter.status && { status: filter.status }) },
      // created_at is started_at: a run is recorded as it starts (API.md §1's default sort field).
      sortFields: { created_at: 'started_at', started_at: 'started_at', finished_at: 'finished_at', status: 'status', duration_ms: 'duration_ms' },
    }, toRun)
  }

  /** Where the workflow was last really deployed: the latest finished, non-dry run that applied at least one object. */
  async lastDeployment(ownerId: string, workflowId: string): Promise<{ cluster: string; cluster_id: string; namespace: string | null; run_id: string } | null> {
    const doc = await this.c.findOne({
      owner_id: ownerId, workflow_id: workflowId, dry_run: false, status: { $in: ['completed', 'failed'] },
      $or: [{ applied_count: { $gt: 0 } }, { nodes: { $elemMatch: { action: { $in: ['created', 'configured', 'unchanged'] } } } }],
    }, { sort: { started_at: -1 }, projection: { cluster: 1, cluster_id: 1, namespace: 1 } })
    return doc ? { cluster: doc.cluster, cluster_id: doc.cluster_id, namespace: doc.namespace, run_id: doc._id } : null
  }

  /**
   * What the workflow last deployed to the cluster: the version (and namespace override) of its latest finished
   * (completed or failed) non-dry run there. Sync re-applies it; drift compares against it.
   */
  async lastDeployedTo(ownerId: string, workflowId: string, clusterId: string): Promise<{ version: number; namespace: string | null; run_id: string } | null> {
    const doc = await this.c.findOne(
      { owner_id: ownerId, workflow_id: workflowId, cluster_id: clusterId, dry_run: false, status: { $in: ['completed', 'failed'] } },
      { sort: { started_at: -1 }, projection: { version: 1, namespace: 1 } },
    )
    return doc ? { version: doc.version, namespace: doc.namespace, run_id: doc._id } : null
  }

  async deleteForWorkflow(ownerId: string, workflowId: string): Promise<void> {
    await this.c.deleteMany({ owner_id: ownerId, workflow_id: workflowId })
  }
}
