// Starts the listener and wires state, storage, sweeper and connections together. The public entry
// point (index.ts) exposes a narrower interface; tests use this one for the debug counters.
import { once } from 'node:events'
import { createServer, type Server, type Socket } from 'node:net'
import { Catalog } from './catalog.ts'
import { CursorRegistry } from './cursors.ts'
import { serveConnection } from './connection.ts'
import type { Logger, ServerState, ServerStats } from './state.ts'
import { DiskStorage, type RecoveryReport } from './storage/disk-storage.ts'
import { MemoryStorage, type Storage } from './storage/storage.ts'
import { TtlSweeper } from './ttl-sweeper.ts'

export interface EmbeddedMongoOptions {
  storage: 'memory' | 'disk'
  dataDir?: string
  host?: string
  port?: number
  ttlSweepIntervalMs?: number
  logger?: Logger
}

export interface EmbeddedMongo {
  uri: string
  port: number
  close(): Promise<void>
}

export interface EmbeddedMongoServerOptions extends EmbeddedMongoOptions {
  /** Journal size that triggers compaction into a snapshot (disk storage). */
  compactJournalBytes?: number
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

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err)
    server.once('error', onError)
    server.listen(port, host, () => {
      server.off('error', onError)
      const addr = server.address()
      resolve(typeof addr === 'object' && addr ? addr.port : port)
    })
  })
}

export async function startEmbeddedMongoServer(opts: EmbeddedMongoServerOptions): Promise<EmbeddedMongoServer> {
  const host = opts.host ?? '127.0.0.1'
  const logger = opts.logger
  let storage: Storage
  let recovery: RecoveryReport | undefined
  let catalog: Catalog
  if (opts.storage === 'disk') {
    if (!opts.dataDir) throw new Error("embedded-mongo: storage 'disk' requires dataDir")
    const disk = new DiskStorage({ dir: opts.dataDir, compactJournalBytes: opts.compactJournalBytes, logger })
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
  const stats: ServerStats = { docsExamined: 0, commands: 0, commandTimings: new Map() }
  const state: ServerState = { catalog, cursors, storage, stats, logger, startedAt: Date.now(), connections: () => sockets.size }
  let connectionIds = 0

  const server = createServer((socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    serveConnection(socket, state, ++connectionIds)
  })
  server.on('error', (err) => logger?.error(`embedded-mongo: listener error: ${err.message}`))

  let port: number
  try {
    port = await listen(server, opts.port ?? 0, host)
  } catch (err) {
    await storage.close()
    throw err
  }

  const ttl = new TtlSweeper(catalog, cursors, storage, logger)
  // A zero or negative interval would spin; anything below 10 ms is treated as 10 ms.
  ttl.start(Math.max(10, opts.ttlSweepIntervalMs ?? 10_000))
  const uri = `mongodb://${uriHost(host)}:${port}/?directConnection=true`
  logger?.info(`embedded-mongo: listening on ${host}:${port} (${opts.storage} storage)`)

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      ttl.stop()
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      const socketsClosed = [...sockets].map((s) => (s.closed ? undefined : once(s, 'close')))
      for (const s of sockets) s.destroy()
      await Promise.all([closed, ...socketsClosed])
      cursors.clear()
      await storage.close()
      logger?.info('embedded-mongo: stopped')
    })()
    return closing
  }

  return { uri, port, close, stats, catalog, storage, recovery, ttl, openConnections: () => sockets.size }
}
