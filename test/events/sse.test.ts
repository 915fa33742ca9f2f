// serveStream on a bare Fastify, without the app: a client that leaves while the snapshot is read leaves
// nothing behind (subscription, upstream via onClose); a failing snapshot or onOpen answers as a route
// error with nothing started; HEAD answers the headers and ends; an HTTP/1.0 client gets plain frames (no
// chunked encoding).
import t from 'tap'
import net from 'node:net'
import Fastify from 'fastify'
import type { AddressInfo } from 'node:net'
import { MemoryStreamHub } from '../../src/events/stream-hub.ts'
import { serveStream } from '../../src/events/sse.ts'
import { NotFound } from '../../src/errors.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

const hub = new MemoryStreamHub()
let gate: Promise<void> = Promise.resolve()
let opened = 0
let closed = 0
const app = Fastify({ logger: false })
app.get('/s/:key', (req, reply) => {
  const key = (req.params as { key: string }).key
  return serveStream(req, reply, {
    hub, key, heartbeatMs: 60_000,
    metadata: async () => {
      await gate
      if (key === 'missing') throw new NotFound('thing')
      return { key }
    },
    onOpen: () => { if (key === 'refuse') throw new NotFound('upstream'); opened++ },
    onClose: () => { closed++ },
  })
})
app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => reply.code(err.statusCode ?? 500).send({ error: err.message }))
await app.listen({ host: '127.0.0.1', port: 0 })
t.teardown(async () => { hub.close(); await app.close() })
const { port } = app.server.address() as AddressInfo

function request(path: string, version = '1.1', method = 'GET'): { socket: net.Socket; text: () => string; ended: Promise<void> } {
  const socket = net.connect({ host: '127.0.0.1', port })
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (c: string) => { text += c })
  socket.write(`${method} ${path} HTTP/${version}\r\nHost: test\r\n${version === '1.1' && method === 'HEAD' ? 'Connection: close\r\n' : ''}\r\n`)
  return { socket, text: () => text, ended: new Promise((resolve) => socket.on('close', () => resolve())) }
}

t.test('a client gone before the snapshot is read: no subscriber left, onClose called', async (t) => {
  let release!: () => void
  gate = new Promise((r) => { release = r })
  const c = request('/s/early')
  await waitFor('subscribed', () => hub.subscriberCount('early') === 1)
  c.socket.destroy()
  await c.ended
  release()
  await waitFor('unsubscribed', () => hub.subscriberCount('early') === 0)
  await waitFor('onClose', () => closed === 1)
  t.equal(opened, 1)
  gate = Promise.resolve()
})

t.test('a snapshot or onOpen that throws answers with the error; nothing is subscribed or opened', async (t) => {
  for (const key of ['missing', 'refuse']) {
    const c = request(`/s/${key}`, '1.0')
    await c.ended
    t.match(c.text(), /^HTTP\/1\.1 404/, key)
    t.match(c.text(), /"error":"(thing|upstream) not found"/)
    t.equal(hub.subscriberCount(key), 0)
  }
  t.equal(closed, 1, 'no onClose without onOpen')
})

t.test('HEAD: the headers, no body, nothing left open', async (t) => {
  const before = closed
  const c = request('/s/head', '1.1', 'HEAD')
  const started = Date.now()
  await c.ended
  t.ok(Date.now() - started < 5000, 'the connection closes as the client asked')
  t.match(c.text(), /^HTTP\/1\.1 200/)
  t.match(c.text(), /content-type: text\/event-stream/i)
  t.equal(c.text().split('\r\n\r\n')[1], '', 'no body')
  t.equal(hub.subscriberCount('head'), 0)
  t.equal(closed, before, 'no upstream was opened')
})

t.test('HTTP/1.0: plain frames, no chunk sizes', async (t) => {
  const c = request('/s/old', '1.0')
  t.teardown(() => c.socket.destroy())
  await waitFor('metadata', () => c.text().includes('event: metadata'))
  hub.publish('old', 'node_update', { n: 1 })
  await waitFor('event', () => c.text().includes('event: node_update'))
  const body = c.text().split('\r\n\r\n')[1]
  t.equal(body, 'retry: 3000\nid: 0\nevent: metadata\ndata: {"key":"old"}\n\nid: 1\nevent: node_update\ndata: {"n":1}\n\n')
})

t.test('HTTP/1.1: plain frames written through the reply, the body ending with the connection', async (t) => {
  const c = request('/s/new')
  t.teardown(() => c.socket.destroy())
  await waitFor('metadata', () => c.text().includes('event: metadata'))
  hub.publish('new', 'node_update', { n: 2 })
  await waitFor('event', () => c.text().includes('event: node_update'))
  const [head, body] = c.text().split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 200 OK\r\n/)
  t.match(head, /\r\nconnection: close/i)
  t.notMatch(head, /transfer-encoding/i)
  t.equal(body, 'retry: 3000\nid: 0\nevent: metadata\ndata: {"key":"new"}\n\nid: 1\nevent: node_update\ndata: {"n":2}\n\n')
})

t.test('replayed frames never overtake the status line (300 connections resuming from Last-Event-ID 0)', async (t) => {
  for (let i = 1; i <= 5; i++) hub.publish('replayed', 'node_update', { i })
  let before = 0
  for (let i = 0; i < 300; i++) {
    const socket = net.connect({ host: '127.0.0.1', port })
    let text = ''
    socket.setEncoding('utf8')
    const whole = new Promise<void>((resolve) => socket.on('data', (chunk: string) => {
      text += chunk
      if (text.split('event: node_update').length > 5) resolve()
    }))
    socket.write('GET /s/replayed HTTP/1.1\r\nHost: test\r\nLast-Event-ID: 0\r\n\r\n')
    await whole
    socket.destroy()
    if (!text.startsWith('HTTP/1.1 200 OK\r\n')) before++
  }
  t.equal(before, 0, 'no connection got a frame before its status line')
})
