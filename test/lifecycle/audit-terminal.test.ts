// Terminal sessions in the audit log, against the simulator: an `open` entry when the shell connects and a
// `close` entry with the exit code, the bytes typed and shown (counts only) and the duration; a refused
// session leaves one `open` entry with its refusal's outcome; nothing typed or shown is ever kept.
import t from 'tap'
import WebSocket from 'ws'
import { startTestApp } from '../helpers/app.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { podWorld } from '../helpers/pod-world.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../src/manifests/metadata.ts'
import { AUDIT_COLLECTION, type AuditDoc } from '../../src/repositories/audit.ts'

const sim = await startTestCluster(t)
const { app } = await startTestApp(t, { CLUSTER_TIMEOUT_MS: 5000 })
const address = await app.listen({ port: 0, host: '127.0.0.1' })
const wsBase = address.replace(/^http/, 'ws')
const { alice, bob, carol, create, track } = await podWorld(app, sim, 'audit-tty')
await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'atty' } })
await create('/apis/apps/v1/namespaces/atty/deployments', {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'box', labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
  spec: { replicas: 1, selector: { matchLabels: { app: 'box' } }, template: { metadata: { labels: { app: 'box' } }, spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } },
})
await waitFor('box ready', async () => (await raw(sim, 'GET', '/apis/apps/v1/namespaces/atty/deployments/box')).json?.status?.readyReplicas === 1)
const boxId = await track(alice, 'box', 'atty')
const carolsBoxId = await track(carol, 'box', 'atty')
const audit = app.db.collection<AuditDoc>(AUDIT_COLLECTION)

interface Frame { type: string; data: any } // eslint-disable-line @typescript-eslint/no-explicit-any

function connect(prefix: string, resourceId: string, token: string, shell = 'sh') {
  const frames: Frame[] = []
  const ws = new WebSocket(`${wsBase}${prefix}/resources/${resourceId}/exec/terminal?${new URLSearchParams({ token, shell })}`)
  const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()))
  ws.on('message', (data) => frames.push(JSON.parse(String(data))))
  const next = (what: string, pred: (f: Frame) => boolean) => waitFor(what, () => frames.find(pred))
  const output = () => frames.filter((f) => f.type === 'output').map((f) => f.data as string).join('')
  return { ws, frames, closed, next, output, send: (frame: object) => ws.send(JSON.stringify(frame)) }
}

async function terminalEntries(since: Date): Promise<AuditDoc[]> {
  await app.audit.recorder.flush()
  return audit.find({ at: { $gte: since }, action: 'resource.exec' }).sort({ at: 1, _id: 1 }).toArray()
}

t.test('a session: open when the shell connects, close with exit code, byte counts and duration', async (t) => {
  const since = new Date()
  const c = connect('/v1/api', boxId, alice.token)
  await c.next('metadata', (f) => f.type === 'metadata')
  const [opened] = await terminalEntries(since)
  t.match(opened, {
    actor_id: alice.user.id, actor_email: alice.email, action: 'resource.exec', target_type: 'resource', target_id: boxId,
    outcome: 'ok', status: 101, session: { phase: 'open' }, ip: '127.0.0.1', request_id: /^req-/,
  })
  await c.next('prompt', () => c.output().includes('# '))
  const typed = 'echo audit-marker-4411\r'
  c.send({ type: 'input', data: typed })
  await waitFor('echoed', () => /\r\naudit-marker-4411\r\n/.test(c.output()))
  c.send({ type: 'input', data: 'exit 7\r' })
  t.same((await c.next('close', (f) => f.type === 'close')).data, { reason: 'exited', exit_code: 7 })
  await c.closed
  const entries = await terminalEntries(since)
  t.equal(entries.length, 2, 'one entry at open, one at close')
  const closed = entries[1]
  t.match(closed, { actor_id: alice.user.id, target_id: boxId, outcome: 'ok', status: 101, request_id: opened.request_id })
  t.match(closed.session, { phase: 'close', exit_code: 7 })
  t.equal(closed.session?.bytes_in, Buffer.byteLength(typed) + Buffer.byteLength('exit 7\r'), 'bytes typed in')
  t.equal(closed.session?.bytes_out, Buffer.byteLength(c.output()), 'bytes of output the client got')
  t.ok((closed.session?.duration_ms ?? -1) >= 0 && closed.session!.duration_ms! < 60_000, `duration ${closed.session?.duration_ms} ms`)
  t.notMatch(JSON.stringify(entries), /audit-marker|echo|exit 7|token/, 'nothing typed or shown is kept')
})

t.test('a session the client closes: close entry with no exit code', async (t) => {
  const since = new Date()
  const c = connect('/v1/api', boxId, alice.token, 'bash')
  await c.next('metadata', (f) => f.type === 'metadata')
  c.ws.close()
  await waitFor('close entry', async () => (await terminalEntries(since)).length === 2)
  const [, closed] = await terminalEntries(since)
  t.match(closed.session, { phase: 'close', exit_code: null, bytes_in: 0 })
})

t.test('refused sessions leave one open entry: a stranger denied (404), a viewer denied (403), a bad shell failed (400)', async (t) => {
  const since = new Date()
  for (const [token, id, shell] of [[bob.token, boxId, 'sh'], [carol.token, carolsBoxId, 'sh'], [alice.token, boxId, 'python']] as const) {
    const c = connect('/v1/api', id, token, shell)
    await c.next('close', (f) => f.type === 'close')
    await c.closed
  }
  const entries = await terminalEntries(since)
  t.same(entries.map((e) => [e.actor_id, e.outcome, e.status, e.session?.phase]), [
    [bob.user.id, 'denied', 404, 'open'],
    [carol.user.id, 'denied', 403, 'open'],
    [alice.user.id, 'failed', 400, 'open'],
  ])
  t.notMatch(JSON.stringify(entries), /python/, 'the refused shell name is not kept')
})

t.test('the KubeOrch adapter\'s terminal is audited alike', async (t) => {
  const since = new Date()
  const c = connect('/kubeorch/v1/api', boxId, alice.token)
  await waitFor('connected', () => c.frames.length > 0)
  c.ws.close()
  await c.closed
  await waitFor('two entries', async () => (await terminalEntries(since)).length === 2)
  t.same((await terminalEntries(since)).map((e) => [e.action, e.target_id, e.session?.phase]), [['resource.exec', boxId, 'open'], ['resource.exec', boxId, 'close']])
})
