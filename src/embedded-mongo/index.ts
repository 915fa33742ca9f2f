// Public entry point of the embedded MongoDB-wire-compatible server.
import { startEmbeddedMongoServer, type EmbeddedMongo, type EmbeddedMongoOptions } from './server.ts'

export type { EmbeddedMongo, EmbeddedMongoOptions }
export { DataDirectoryDamagedError, DataDirectoryInUseError } from './storage/disk-storage.ts'

export async function startEmbeddedMongo(opts: EmbeddedMongoOptions): Promise<EmbeddedMongo> {
  const server = await startEmbeddedMongoServer(opts)
  return { uri: server.uri, socketPath: server.socketPath, port: server.port, close: server.close }
}
