// Progress writes of long work: never two at once for one record, changes during a write fold into one
// more write of the newest state, flush waits for all of it, and a failed write does not stop the next.
import t from 'tap'
import { coalescingWriter } from '../../src/services/coalescing-writer.ts'

function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { opened, open }
}

t.test('touches during a write fold into one more write of the newest state', async (t) => {
  let state = 0
  let inFlight = 0
  let most = 0
  const written: number[] = []
  const gates: Array<ReturnType<typeof gate>> = []
  const w = coalescingWriter(async () => {
    inFlight++
    most = Math.max(most, inFlight)
    const seen = state
    const g = gate()
    gates.push(g)
    await g.opened
    written.push(seen)
    inFlight--
  })
  state = 1; w.touch()
  state = 2; w.touch()
  state = 3; w.touch()
  t.equal(gates.length, 1, 'one write in flight')
  gates[0].open()
  await new Promise<void>((resolve) => setImmediate(resolve))
  t.equal(gates.length, 2, 'one more write after it, not two')
  gates[1].open()
  await w.flush()
  t.same(written, [1, 3], 'the first state, then the newest')
  t.equal(most, 1, 'never two writes at once')
})

t.test('a failed write is swallowed and the next touch writes again', async (t) => {
  let calls = 0
  const w = coalescingWriter(async () => { calls++; if (calls === 1) throw new Error('database down') })
  w.touch()
  await w.flush()
  w.touch()
  await w.flush()
  t.equal(calls, 2)
})

t.test('flush with nothing written resolves at once', async (t) => {
  const w = coalescingWriter(async () => { t.fail('no write expected') })
  await w.flush()
  t.pass()
})
