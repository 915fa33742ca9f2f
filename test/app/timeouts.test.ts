// Slow clients cannot hold a socket: the request, headers and keep-alive timeouts of the configuration
// reach Node's server, and a client that stalls is answered 408 {error} and disconnected. A real listening
// server and raw sockets, since inject never goes through Node's HTTP parser.
import t from 'tap'
import Fastify from 'fastify'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { fastifyOptions } from '../../src/fastify-options.ts'
import { validatorCompiler } from '../../src/validation.ts'
import { testConfig } from '../../src/config.ts'
import configPlugin from '../../plugins/config.ts'
import errorsPlugin from '../../plugins/errors.ts'

const REQUEST = 600
const HEADERS = 300
const KEEP_ALIVE = 300
// Node checks request and headers timeouts on an interval (a quarter of the headers timeout here); the rest
// is a busy machine.
const SLACK = 1500

const config = testConfig({ REQUEST_TIMEOUT_MS: REQUEST, HEADERS_TIMEOUT_MS: HEADERS, KEEP_ALIVE_TIMEOUT_MS: KEEP_ALIVE })
const app = Fastify(fastifyOptions(config))
app.setValidatorCompiler(validatorCompiler)
await app.register(configPlugin, { config })
await app.register(errorsPlugin)
app.post('/upload', async (req) => ({ got: req.body }))
app.get('/ping', async () => ({ ok: true }))
await app.listen({ port: 0, host: '127.0.0.1' })
t.teardown(() => app.close())
const { port } = app.server.address() as { port: number }

async function open(): Promise<{ socket: Socket; received: () => string; closed: Promise<unknown> }> {
  const socket = connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (c: Buffer) => chunks.push(c))
  const closed = once(socket, 'close')
  await once(socket, 'connect')
  return { socket, received: () => Buffer.concat(chunks).toString(), closed }
}

const bodyOf = (reply: string) => reply.slice(reply.indexOf('\r\n\r\n') + 4)

/** Milliseconds until the server closed the socket; a deadline (not a sleep) makes a server that never does fail fast. */
async function closedAfter(socket: Socket, closed: Promise<unknown>, deadline: number): Promise<number> {
  const started = Date.now()
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<'expired'>((resolve) => { timer = setTimeout(() => resolve('expired'), deadline) })
  const outcome = await Promise.race([closed, expired])
  clearTimeout(timer)
  if (outcome === 'expired') { socket.destroy(); return Infinity }
  return Date.now() - started
}

t.test('the configured timeouts are the server\'s', async (t) => {
  t.equal(app.server.requestTimeout, REQUEST)
  t.equal(app.server.headersTimeout, HEADERS)
  t.equal(app.server.keepAliveTimeout, KEEP_ALIVE)
  const defaults = testConfig()
  t.ok(defaults.REQUEST_TIMEOUT_MS > 0 && defaults.HEADERS_TIMEOUT_MS > 0 && defaults.KEEP_ALIVE_TIMEOUT_MS > 0, 'on by default')
})

t.test('a client that sends headers and half a body is answered 408 and cut off', async (t) => {
  const { socket, received, closed } = await open()
  socket.write('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"half":')
  const elapsed = await closedAfter(socket, closed, 2 * (REQUEST + SLACK))
  t.ok(elapsed < REQUEST + SLACK, `cut after ${elapsed} ms`)
  t.match(received(), /^HTTP\/1\.1 408 /)
  t.same(JSON.parse(bodyOf(received())), { error: 'request took too long to arrive' })
})

t.test('a client that never finishes its headers is cut off after the headers timeout', async (t) => {
  const { socket, received, closed } = await open()
  socket.write('GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: ')
  const elapsed = await closedAfter(socket, closed, 2 * (HEADERS + SLACK))
  t.ok(elapsed < HEADERS + SLACK, `cut after ${elapsed} ms`)
  t.match(received(), /^HTTP\/1\.1 408 /)
})

t.test('an idle keep-alive connection is closed after the keep-alive timeout', async (t) => {
  const { socket, received, closed } = await open()
  socket.write('GET /ping HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n')
  await once(socket, 'data')
  t.match(received(), /^HTTP\/1\.1 200 /)
  // Node keeps the socket up to a further second past the timeout it announces, for requests in transit.
  const idle = await closedAfter(socket, closed, 2 * (KEEP_ALIVE + 1000 + SLACK))
  t.ok(idle < KEEP_ALIVE + 1000 + SLACK, `closed after ${idle} ms idle`)
})

t.test('a request that arrives in time is served', async (t) => {
  const { socket, received, closed } = await open()
  socket.end('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 8\r\nConnection: close\r\n\r\n{"a":1}\n')
  await closed
  t.match(received(), /^HTTP\/1\.1 200 /)
  t.same(JSON.parse(bodyOf(received())), { got: { a: 1 } })
})
