// Starts the listener and wires state, storage, sweeper and connections together. The public entry
// point (index.ts) exposes a narrower interface; tests use this one for the debug counters.
//
// The server has no authentication, so by default it listens on a Unix socket that only this user can
// open: mode 0600 inside a fresh 0700 directory. The directory is under the system temp dir rather than
// DATA_DIR because socket paths are limited to ~104 bytes and some volumes (network or bind mounts) cannot
// hold sockets. TCP is for explicit tool use only (`npm run embedded-db` with EMBEDDED_DB_PORT).
import { once } from 'node:events'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Catalog } from './catalog.ts'
import { CursorRegistry } from './cursors.ts'
import { serveConnection } from './connection.ts'
import type { Logger, ServerState, ServerStats } from './state.ts'
import { DiskStorage, type JournalWriter, type RecoveryReport, type SnapshotWriter } from './storage/disk-storage.ts'
import { MemoryStorage, type Storage } from './storage/storage.ts'
import { TtlSweeper } from './ttl-sweeper.ts'

export interface EmbeddedMongoOptions {
  storage: 'memory' | 'disk'
  dataDir?: string
  /** Listen on TCP instead of the private Unix socket. Anyone who can reach host:port can read and write
   *  everything, so this is for tools only. */
  tcp?: { host?: string; port?: number }
  ttlSweepIntervalMs?: number
  logger?: Logger
}

export interface EmbeddedMongo {
  uri: string
  /** The Unix socket the server listens on (unless `tcp` was asked for). */
  socketPath?: string
  /** The TCP port (only with `tcp`). */
  port?: number
  close(): Promise<void>
}

export interface EmbeddedMongoServerOptions extends EmbeddedMongoOptions {
  /** Journal size that triggers compaction into a snapshot (disk storage). */
  compactJournalBytes?: number
  /** Tests only: how journal appends are written, to simulate a full disk. */
  journalWriter?: JournalWriter
  /** Tests only: how snapshots are written, to simulate a disk too full for one. */
  snapshotWriter?: SnapshotWriter
}

export interface EmbeddedMongoServer extends EmbeddedMongo {
  readonly stats: ServerStats
  readonly catalog: Catalog
  readonly storage: Storage
  readonly recovery: RecoveryReport | undefined
  readonly ttl: TtlSweeper
  openConnections(): number
}

function uriHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
}

function listen(server: Server, address: { port: number; host: string } | { path: string }): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err)
    server.once('error', onError)
    server.listen(address, () => {
      server.off('error', onError)
      const addr = server.address()
      resolve(typeof addr === 'object' && addr ? addr.port : undefined)
    })
  })
}

const SOCKET_FILE = 'mongod.sock'

/** A new directory only this user can enter (mkdtemp creates it 0700), for the socket. */
async function privateSocketPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-mongo-'))
  await chmod(dir, 0o700)
  return join(dir, SOCKET_FILE)
}

/** mongodb:// URI of a Unix socket: the driver takes the percent-encoded path as the host. */
function socketUri(path: string): string {
  return `mongodb://${encodeURIComponent(path)}/?directConnection=true`
}

export async function startEmbeddedMongoServer(opts: EmbeddedMongoServerOptions): Promise<EmbeddedMongoServer> {
  const logger = opts.logger
  let storage: Storage
  let recovery: RecoveryReport | undefined
  let catalog: Catalog
  if (opts.storage === 'disk') {
    if (!opts.dataDir) throw new Error("embedded-mongo: storage 'disk' requires dataDir")
    const disk = new DiskStorage({ dir: opts.dataDir, compactJournalBytes: opts.compactJournalBytes, journalWriter: opts.journalWriter, snapshotWriter: opts.snapshotWriter, logger })
    catalog = new Catalog(disk)
    recovery = await disk.open(catalog)
    storage = disk
  } else if (opts.storage === 'memory') {
    storage = new MemoryStorage()
    catalog = new Catalog(storage)
  } else {
    throw new Error(`embedded-mongo: unknown storage '${String(opts.storage)}'`)
  }

  const sockets = new Set<Socket>()
  const cursors = new CursorRegistry()
  const stats: ServerStats = { docsExamined: 0, filtersCompiled: 0, countShortcuts: 0, commands: 0, commandTimings: new Map() }
  const state: ServerState = { catalog, cursors, storage, stats, logger, startedAt: Date.now(), connections: () => sockets.size }
  let connectionIds = 0

  const server = createServer((socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    serveConnection(socket, state, ++connectionIds)
  })
  server.on('error', (err) => logger?.error(`embedded-mongo: listener error: ${err.message}`))

  let port: number | undefined
  let socketPath: string | undefined
  let uri: string
  let where: string
  try {
    if (opts.tcp) {
      const host = opts.tcp.host ?? '127.0.0.1'
      port = await listen(server, { port: opts.tcp.port ?? 0, host })
      uri = `mongodb://${uriHost(host)}:${port}/?directConnection=true`
      where = `${host}:${port} (TCP, no authentication: anyone who can reach it can read and write)`
    } else {
      socketPath = await privateSocketPath()
      await listen(server, { path: socketPath })
      // The 0700 directory already keeps others out; 0600 also covers a directory made wider later.
      await chmod(socketPath, 0o600)
      uri = socketUri(socketPath)
      where = socketPath
    }
  } catch (err) {
    server.close()
    if (socketPath) await rm(dirname(socketPath), { recursive: true, force: true })
    await storage.close()
    throw err
  }

  const ttl = new TtlSweeper(catalog, cursors, storage, logger)
  // A zero or negative interval would spin; anything below 10 ms is treated as 10 ms.
  ttl.start(Math.max(10, opts.ttlSweepIntervalMs ?? 10_000))
  logger?.info(`embedded-mongo: listening on ${where} (${opts.storage} storage)`)

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      ttl.stop()
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      const socketsClosed = [...sockets].map((s) => (s.closed ? undefined : once(s, 'close')))
      for (const s of sockets) s.destroy()
      await Promise.all([closed, ...socketsClosed])
      if (socketPath) await rm(dirname(socketPath), { recursive: true, force: true })
      cursors.clear()
      await storage.close()
      logger?.info('embedded-mongo: stopped')
    })()
    return closing
  }

  return { uri, port, socketPath, close, stats, catalog, storage, recovery, ttl, openConnections: () => sockets.size }
}
