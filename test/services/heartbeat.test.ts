// The liveness loop shared by runs, builds and imports: each period marks the work alive, then sweeps;
// a failure is reported and the next period tries again; stop ends it; staleness is three periods.
import t from 'tap'
import { Heartbeat, staleBefore } from '../../src/services/heartbeat.ts'

t.test('each period beats, then sweeps; a failure is reported and the loop goes on until stopped', async (t) => {
  const order: string[] = []
  let beats = 0
  let reported = 0
  let third!: () => void
  const thirdBeat = new Promise<void>((resolve) => { third = resolve })
  const hb = new Heartbeat({
    periodMs: 10,
    beat: async () => { beats++; order.push('beat'); if (beats === 1) throw new Error('database down'); if (beats === 3) third() },
    sweep: async () => { order.push('sweep') },
    onError: () => { reported++ },
  })
  // The loop's timer never keeps a process alive (unref), so this test holds the process open itself.
  const keepAlive = setInterval(() => undefined, 1000)
  t.teardown(() => clearInterval(keepAlive))
  hb.start()
  hb.start()
  await thirdBeat
  hb.stop()
  t.equal(reported, 1, 'the failed beat is reported once')
  t.same(order.slice(0, 4), ['beat', 'beat', 'sweep', 'beat'], 'no sweep after a failed beat; a good beat is followed by a sweep')
  const after = beats
  // Absence can only be seen by letting several periods pass.
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(beats, after, 'nothing beats after stop')
})

t.test('work is stale three periods after its last mark', async (t) => {
  t.equal(staleBefore(5000, 1_000_000).getTime(), 985_000)
})
