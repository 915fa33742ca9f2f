// The terminal WebSocket on the TLS port (TLS=self-signed): the upgrade goes through the HTTP/1.1 side
// of the secure HTTP/2 server (ALPN http/1.1), and a shell round trip works as over plain HTTP.
import t from 'tap'
import WebSocket from 'ws'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { startTestApp } from '../helpers/app.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { podWorld } from '../helpers/pod-world.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../src/manifests/metadata.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'cwo-tls-term-'))
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
const sim = await startTestCluster(t)
// A short headers timeout: the upgraded connection must not be cut by the stall guard after it.
const { app } = await startTestApp(t, { TLS: 'self-signed', DATA_DIR: dataDir, CLUSTER_TIMEOUT_MS: 5000, HEADERS_TIMEOUT_MS: 500, REQUEST_TIMEOUT_MS: 1000, TERMINAL_PING_MS: 200 })
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as AddressInfo
const ca = readFileSync(join(dataDir, 'tls-cert.pem'))
const { alice, create, track } = await podWorld(app, sim, 'tls-term')
await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tty' } })
await create('/apis/apps/v1/namespaces/tty/deployments', {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'box', labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
  spec: { replicas: 1, selector: { matchLabels: { app: 'box' } }, template: { metadata: { labels: { app: 'box' } }, spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } },
})
await waitFor('box ready', async () => (await raw(sim, 'GET', '/apis/apps/v1/namespaces/tty/deployments/box')).json?.status?.readyReplicas === 1)
const boxId = await track(alice, 'box', 'tty')

t.test('wss:// terminal: metadata, echo round trip past the headers timeout, exit code in the close message', async (t) => {
  const frames: Array<{ type: string; data: any }> = [] // eslint-disable-line @typescript-eslint/no-explicit-any
  const ws = new WebSocket(`wss://localhost:${port}/v1/api/resources/${boxId}/exec/terminal?${new URLSearchParams({ token: alice.token, shell: 'sh' })}`, { ca, ALPNProtocols: ['http/1.1'] } as WebSocket.ClientOptions)
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)))
  ws.on('message', (data) => frames.push(JSON.parse(String(data))))
  await new Promise<void>((resolve, reject) => { ws.on('open', () => resolve()); ws.on('error', reject) })
  t.equal((ws as unknown as { _socket: import('node:tls').TLSSocket })._socket.alpnProtocol, 'http/1.1', 'the upgrade went over HTTP/1.1 on the TLS port')
  const output = () => frames.filter((f) => f.type === 'output').map((f) => f.data).join('')
  await waitFor('metadata', () => frames.some((f) => f.type === 'metadata'))
  t.match(frames[0], { type: 'metadata', data: { container: 'main', namespace: 'tty', shell: 'sh' } })
  await waitFor('prompt', () => output().includes('# '))
  // Pings every 200 ms: once more pongs than the headers timeout allows, the connection has outlived it.
  let pings = 0
  ws.on('ping', () => { pings++ })
  await waitFor('pings past the headers timeout', () => pings * 200 > 1500)
  ws.send(JSON.stringify({ type: 'input', data: 'echo over-tls\r' }))
  await waitFor('echo', () => /\r\nover-tls\r\n/.test(output()))
  ws.send(JSON.stringify({ type: 'input', data: 'exit 4\r' }))
  await waitFor('close message', () => frames.some((f) => f.type === 'close'))
  t.same(frames.at(-1), { type: 'close', data: { reason: 'exited', exit_code: 4 } })
  t.equal(await closed, 1000)
})
