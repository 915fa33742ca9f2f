// A listener on one port of every loopback interface (0.0.0.0 and, where the machine has IPv6, ::1) that
// records and drops each connection: the place a redirect or a rebinding answer would lead to. Tests of the
// outbound policy assert it saw none.
import { once } from 'node:events'
import net from 'node:net'

interface Teardown { teardown(fn: () => unknown): void }

export interface ForbiddenTarget {
  port: number
  /** `address:port` of each connection that reached it, in order. */
  connections: string[]
  hasIPv6: boolean
}

export async function startForbiddenTarget(t: Teardown): Promise<ForbiddenTarget> {
  const connections: string[] = []
  const count = (socket: net.Socket) => { connections.push(`${socket.localAddress}:${socket.localPort}`); socket.destroy() }
  const target = net.createServer(count).listen(0, '0.0.0.0')
  await once(target, 'listening')
  const port = (target.address() as net.AddressInfo).port
  const target6 = net.createServer(count)
  const hasIPv6 = await new Promise<boolean>((resolve) => { target6.once('error', () => resolve(false)); target6.listen(port, '::1', () => resolve(true)) })
  t.teardown(() => { target.close(); if (hasIPv6) target6.close() })
  return { port, connections, hasIPv6 }
}
