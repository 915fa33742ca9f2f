// Who this process is among the service's replicas (API.md §11). A replica's id names it in leases, work
// claims and the events it writes; it is new on every start, so a restarted process never mistakes a
// dead predecessor's leases for its own.
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'

export interface ReplicaIdentity {
  /** `<host>-<pid>-<random>`: readable in the database, unique across restarts. */
  readonly id: string
  /** True when other replicas may share the database: events, watches and schedules are coordinated through it. */
  readonly shared: boolean
}

/** Whether this process shares its database with other replicas (REPLICA_MODE, and auto: MONGODB_URI set). */
export function isSharedMode(mode: 'auto' | 'single' | 'shared', hasMongoUri: boolean): boolean {
  return mode === 'shared' || (mode === 'auto' && hasMongoUri)
}

export function replicaIdentity(mode: 'auto' | 'single' | 'shared', hasMongoUri: boolean): ReplicaIdentity {
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '').slice(0, 63) || 'host'
  return {
    id: `${host}-${process.pid}-${randomBytes(4).toString('hex')}`,
    shared: isSharedMode(mode, hasMongoUri),
  }
}
