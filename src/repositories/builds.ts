// The `builds` collection: one record per image build (API.md §8), owner-scoped. The record is the build's
// truth across restarts: status, phase and progress as the pod reported them, the kept (masked, capped) log,
// and which process follows it (instance_id + heartbeat_at, as runs do). A terminal status is final: every
// write of progress or outcome is conditional on the build still running, so a cancel can never be undone
// by what a dying pod reports afterwards.
import type { Collection, Db, Filter } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId, isId } from './ids.ts'
import { paginate, searchFilter, type Page, type PageRequest } from './pagination.ts'
import type { BuildPhase, BuildStatus } from '../services/build/progress.ts'
import type { BuildLogLine } from '../services/build/build-log.ts'

export const RUNNING_STATUSES: BuildStatus[] = ['pending', 'cloning', 'building', 'pushing']

export interface BuildDoc {
  _id: string
  owner_id: string
  repo_url: string
  branch: string | null
  commit: string | null
  context_dir: string
  /** Repository-relative. */
  dockerfile: string
  build_args: Record<string, string>
  registry_id: string
  image_name: string
  image_tag: string
  cluster: string
  cluster_id: string
  namespace: string
  workflow_id: string | null
  node_id: string | null
  status: BuildStatus
  phase: BuildPhase | null
  progress: number
  image_ref: string | null
  image_digest: string | null
  error: string | null
  /** Whether the workflow node's image was set to the digest-pinned reference (null: no node asked for). */
  node_updated: boolean | null
  job_name: string
  logs: BuildLogLine[]
  logs_truncated: boolean
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
  updated_at: Date
  /** Internal: the process following the build, and when it last said so. */
  instance_id: string
  heartbeat_at: Date
}

export type Build = Omit<BuildDoc, '_id' | 'owner_id' | 'logs' | 'instance_id' | 'heartbeat_at' | 'created_at' | 'started_at' | 'finished_at' | 'updated_at'> & {
  id: string; created_at: string; started_at: string | null; finished_at: string | null; updated_at: string
}

export const toBuild = ({ _id, owner_id: _o, logs: _l, instance_id: _i, heartbeat_at: _h, created_at, started_at, finished_at, updated_at, ...rest }: BuildDoc): Build => ({
  id: _id, ...rest,
  created_at: created_at.toISOString(), started_at: started_at ? started_at.toISOString() : null,
  finished_at: finished_at ? finished_at.toISOString() : null, updated_at: updated_at.toISOString(),
})

indexSetups.push(async (db) => {
  const c = db.collection('builds')
  await c.createIndex({ owner_id: 1, created_at: -1 })
  await c.createIndex({ owner_id: 1, workflow_id: 1, created_at: -1 })
  // Start-up recovery and the heartbeat sweep look for builds still running.
  await c.createIndex({ status: 1 })
})

const running = { $in: RUNNING_STATUSES }
const NO_LOGS = { projection: { logs: 0 } }

export type BuildProgress = Partial<Pick<BuildDoc, 'status' | 'phase' | 'progress' | 'logs' | 'logs_truncated' | 'started_at' | 'image_ref' | 'image_digest'>>
export type BuildOutcome = Pick<BuildDoc, 'status' | 'error' | 'finished_at'> & BuildProgress

export class BuildRepository {
  private readonly c: Collection<BuildDoc>
  constructor(db: Db) {
    this.c = db.collection<BuildDoc>('builds')
  }

  newId(): string { return newId() }

  async create(doc: BuildDoc): Promise<Build> {
    await this.c.insertOne(doc)
    return toBuild(doc)
  }

  async get(ownerId: string, id: string): Promise<Build | null> {
    if (!isId(id)) return null
    const doc = await this.c.findOne({ _id: id, owner_id: ownerId }, NO_LOGS)
    return doc && toBuild({ ...doc, logs: [] })
  }

  /** The record with its kept log (the stream's replay). */
  async withLogs(ownerId: string, id: string): Promise<BuildDoc | null> {
    if (!isId(id)) return null
    return this.c.findOne({ _id: id, owner_id: ownerId })
  }

  async list(ownerId: string, req: PageRequest, filter: { status?: BuildStatus; workflow_id?: string } = {}): Promise<Page<Build>> {
    return paginate(this.c, req, {
      filter: { owner_id: ownerId, ...(filter.status && { status: filter.status }), ...(filter.workflow_id && { workflow_id: filter.workflow_id }) },
      sortFields: { created_at: 'created_at', finished_at: 'finished_at', status: 'status', image_name: 'image_name', updated_at: 'updated_at' },
      searchFields: ['image_name', 'repo_url', 'image_tag'],
      projection: { logs: 0 },
    }, (d) => toBuild({ ...d, logs: [] }))
  }

  async search(ownerId: string, q: string, limit: number): Promise<Build[]> {
    const docs = await this.c.find({ owner_id: ownerId, ...searchFilter<BuildDoc>(q, ['image_name', 'repo_url', 'image_tag']) }, NO_LOGS)
      .sort({ created_at: -1, _id: -1 }).limit(limit).toArray()
    return docs.map((d) => toBuild({ ...d, logs: [] }))
  }

  /**
   * Progress of a build still running; null when it has ended meanwhile, or, given `instanceId`, when another
   * process has taken it over (the write is refused either way).
   */
  async progress(id: string, fields: BuildProgress, instanceId?: string): Promise<BuildDoc | null> {
    const filter: Filter<BuildDoc> = { _id: id, status: running, ...(instanceId && { instance_id: instanceId }) }
    return this.c.findOneAndUpdate(filter, { $set: { ...fields, updated_at: new Date() } }, { returnDocument: 'after', ...NO_LOGS })
  }

  /** Records the end; null when the build had already ended (cancelled, or finished by another process). */
  async finish(id: string, outcome: BuildOutcome, owner?: string): Promise<BuildDoc | null> {
    const filter: Filter<BuildDoc> = { _id: id, status: running, ...(owner && { owner_id: owner }) }
    return this.c.findOneAndUpdate(filter, { $set: { ...outcome, updated_at: new Date() } }, { returnDocument: 'after', ...NO_LOGS })
  }

  async setNodeUpdated(id: string, updated: boolean): Promise<void> {
    await this.c.updateOne({ _id: id }, { $set: { node_updated: updated } })
  }

  /** Builds still running whose process has not said it is alive since `before` (or is this one, restarted). */
  async abandoned(instanceId: string, before: Date): Promise<BuildDoc[]> {
    return this.c.find({ status: running, instance_id: { $ne: instanceId }, heartbeat_at: { $lt: before } }).toArray()
  }

  /**
   * Takes a build over from a process that went silent; false when another process took it first. Its
   * heartbeat is set to `aliveUntil` (ahead of now): the re-attach that follows may take longer than the
   * staleness window, and another replica must not take the build meanwhile.
   */
  async claim(id: string, from: { instance_id: string; heartbeat_at: Date }, instanceId: string, aliveUntil: Date): Promise<boolean> {
    const res = await this.c.updateOne({ _id: id, status: running, instance_id: from.instance_id, heartbeat_at: from.heartbeat_at }, { $set: { instance_id: instanceId, heartbeat_at: aliveUntil } })
    return res.modifiedCount === 1
  }

  /**
   * Marks the builds `instanceId` follows alive. Answers those of `ids` another process took over meanwhile
   * (this one went silent for three periods and was taken for dead): the caller must stop following them.
   */
  async heartbeat(ids: string[], at: Date, instanceId: string): Promise<string[]> {
    if (!ids.length) return []
    const res = await this.c.updateMany({ _id: { $in: ids }, status: running, instance_id: instanceId }, { $set: { heartbeat_at: at } })
    if (res.matchedCount === ids.length) return []
    const lost = await this.c.find({ _id: { $in: ids }, status: running, instance_id: { $ne: instanceId } }, { projection: { _id: 1 } }).toArray()
    return lost.map((d) => d._id)
  }

  /** Shutdown: this process stops following these builds; the next one to sweep takes them over at once. */
  async release(ids: string[]): Promise<void> {
    if (ids.length) await this.c.updateMany({ _id: { $in: ids }, status: running }, { $set: { heartbeat_at: new Date(0) } })
  }

  /** A note on a build that has ended (a cancel whose Job could not be deleted). */
  async setError(id: string, error: string): Promise<void> {
    await this.c.updateOne({ _id: id }, { $set: { error, updated_at: new Date() } })
  }
}
