// The in-process hub on its own: fan-out per key, ids, bounded buffers that drop (and warn, without the
// payload) for a slow subscriber only, the replay window, idle keys forgotten, close ends everything.
import t from 'tap'
import { MemoryStreamHub, CLOSE_DRAIN_MS, type StreamEvent, type Subscription } from '../../src/events/stream-hub.ts'

function take(sub: Subscription, n: number): Promise<StreamEvent[]> {
  const it = sub[Symbol.asyncIterator]()
  return (async () => {
    const out: StreamEvent[] = []
    while (out.length < n) {
      const r = await it.next()
      if (r.done) break
      out.push(r.value)
    }
    return out
  })()
}

function captureLog() {
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = []
  return { lines, log: { warn: (obj: object, msg: string) => { lines.push({ obj: obj as Record<string, unknown>, msg }) } } }
}

t.test('publish fans out to every subscriber of the key only, ids increasing per key', async (t) => {
  const hub = new MemoryStreamHub()
  const a = hub.subscribe('workflow:1')
  const b = hub.subscribe('workflow:1')
  const other = hub.subscribe('workflow:2')
  t.equal(hub.subscriberCount('workflow:1'), 2)
  hub.publish('workflow:1', 'node_update', { node_id: 'n1' })
  hub.publish('workflow:2', 'node_update', { node_id: 'x' })
  hub.publish('workflow:1', 'complete', { run_id: 'r', status: 'completed' })
  const [ea, eb, eo] = await Promise.all([take(a, 2), take(b, 2), take(other, 1)])
  t.same(ea, [{ id: 1, type: 'node_update', data: { node_id: 'n1' } }, { id: 2, type: 'complete', data: { run_id: 'r', status: 'completed' } }])
  t.same(eb, ea)
  t.same(eo, [{ id: 1, type: 'node_update', data: { node_id: 'x' } }])
  a.close()
  t.ok(a.closed)
  t.equal(hub.subscriberCount('workflow:1'), 1)
})

t.test('a full buffer drops for that subscriber alone, warns once per period without the payload', async (t) => {
  let now = 1000
  const { lines, log } = captureLog()
  const hub = new MemoryStreamHub({ bufferSize: 3, log, now: () => now, warnIntervalMs: 10_000 })
  let drops = 0
  const slow = hub.subscribe('k', { onDrop: () => { drops++ } })
  const fast = hub.subscribe('k', { bufferSize: 100 })
  for (let i = 1; i <= 10; i++) hub.publish('k', 'log', { line: `secret-line-${i}` })
  t.equal(drops, 7)
  t.same((await take(slow, 3)).map((e) => e.id), [1, 2, 3], 'the slow one kept the first three')
  t.same((await take(fast, 10)).map((e) => e.id), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'the fast one got everything')
  t.equal(lines.length, 1, 'one warning for the burst')
  t.match(lines[0], { obj: { stream: 'k', dropped: 1 }, msg: /buffer full/ })
  t.notMatch(JSON.stringify(lines), /secret-line/)
  // The slow one drained its buffer: it receives again.
  hub.publish('k', 'log', { line: 'again' })
  t.same((await take(slow, 1)).map((e) => e.id), [11])
  for (let i = 0; i < 5; i++) hub.publish('k', 'log', {})
  t.equal(lines.length, 1, 'still within the period')
  now += 10_000
  hub.publish('k', 'log', {})
  t.equal(lines.length, 2)
  t.equal(lines[1].obj.dropped, 9, 'the next warning counts the drops since the last one (6 + 2 + 1)')
})

t.test('Last-Event-ID replays what is still in the window, in order', async (t) => {
  const hub = new MemoryStreamHub({ replaySize: 4 })
  for (let i = 1; i <= 6; i++) hub.publish('k', 'e', { i })
  const resumed = hub.subscribe('k', { lastEventId: 4 })
  t.equal(resumed.since, 4)
  hub.publish('k', 'e', { i: 7 })
  t.same((await take(resumed, 3)).map((e) => e.id), [5, 6, 7])
  const old = hub.subscribe('k', { lastEventId: 1 })
  t.same((await take(old, 4)).map((e) => e.id), [4, 5, 6, 7], 'older than the window: what the window holds')
  const fresh = hub.subscribe('k')
  t.equal(fresh.since, 7, 'without Last-Event-ID: from now on')
  const future = hub.subscribe('k', { lastEventId: 99 })
  t.equal(future.since, 7, 'an id this key never had is not resumed from')
  hub.publish('k', 'e', { i: 8 })
  t.same((await take(future, 1)).map((e) => e.id), [8])
})

t.test('keys with no subscriber and no event for idleKeyMs are forgotten', async (t) => {
  let now = 0
  const hub = new MemoryStreamHub({ idleKeyMs: 1000, now: () => now })
  for (let i = 0; i < 100; i++) hub.publish(`k${i}`, 'e', {})
  const held = hub.subscribe('held')
  t.equal(hub.keyCount(), 101)
  now = 2000
  hub.publish('new', 'e', {})
  t.equal(hub.keyCount(), 2, 'only the subscribed key and the new one remain')
  held.close()
  t.equal(hub.keyCount(), 1, 'a key that never had an event goes with its last subscriber')
  hub.subscribe('never-published').close()
  t.equal(hub.keyCount(), 1)
})

t.test('close lets a subscriber read what was published before it (a run\'s final complete), then ends it', async (t) => {
  const hub = new MemoryStreamHub()
  const sub = hub.subscribe('workflow:1')
  hub.publish('workflow:1', 'workflow_sync', { nodes: [] })
  hub.publish('workflow:1', 'complete', { run_id: 'r', status: 'completed' })
  hub.close()
  t.notOk(sub.closed, 'still open while its queue is unread')
  hub.publish('workflow:1', 'node_update', {})
  t.same((await take(sub, 10)).map((e) => e.type), ['workflow_sync', 'complete'], 'what came before the close, nothing after, then the end')
  t.ok(sub.closed)
  await sub.done
})

t.test('close cuts off a subscriber that does not read its queue within CLOSE_DRAIN_MS', async (t) => {
  const hub = new MemoryStreamHub()
  const sub = hub.subscribe('workflow:1')
  hub.publish('workflow:1', 'complete', { run_id: 'r', status: 'failed' })
  const started = Date.now()
  hub.close()
  await sub.done
  t.ok(sub.closed)
  t.ok(Date.now() - started >= CLOSE_DRAIN_MS - 50, 'after the drain bound, not at once')
  t.same(await take(sub, 1), [], 'its queue is gone')
})

t.test('close ends every subscription (pending reads finish) and later ones start closed', async (t) => {
  const hub = new MemoryStreamHub()
  const sub = hub.subscribe('k')
  const reading = take(sub, 1)
  let ended = false
  void sub.done.then(() => { ended = true })
  hub.close()
  t.same(await reading, [])
  await sub.done
  t.ok(ended)
  t.ok(sub.closed)
  const late = hub.subscribe('k')
  t.ok(late.closed)
  hub.publish('k', 'e', {})
  t.same(await take(late, 1), [])
})
