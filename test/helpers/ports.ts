// A loopback port nothing listens on right now, for tests that start the real server as a process.
import { createServer } from 'node:net'
import { once } from 'node:events'

export async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1')
  await once(srv, 'listening')
  const { port } = srv.address() as { port: number }
  await new Promise((resolve) => srv.close(resolve))
  return port
}
