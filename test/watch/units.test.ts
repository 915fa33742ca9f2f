// The pure parts of the watch: reconnect delays (spec: exponential, base 5 s, maximum 60 s, here with
// jitter) and the crash-loop rule that keeps a restarting container failed between two back-offs.
import t from 'tap'
import { backoffDelay } from '../../src/kube/watch-backoff.ts'
import { deriveStatus } from '../../src/kube/status/index.ts'

const spec = { baseMs: 5000, maxMs: 60_000 }

t.test('every delay stays within [base, cap], whatever the attempt and the jitter', async (t) => {
  for (let attempt = 0; attempt < 50; attempt++) {
    for (const r of [0, 0.25, 0.5, 0.999, 1]) {
      const d = backoffDelay(attempt, spec, () => r)
      t.ok(d >= 5000 && d <= 60_000, `attempt ${attempt}, random ${r}: ${d} ms`)
    }
  }
  t.equal(backoffDelay(1000, spec, () => 1), 60_000, 'a very long outage is capped')
  t.equal(backoffDelay(-3, spec, () => 0), 5000, 'nonsense attempts count as the first')
})

t.test('the delay grows exponentially from the base to the cap', async (t) => {
  const mid = (a: number) => backoffDelay(a, spec, () => 0.5)
  t.equal(mid(0), Math.round(5000 + 0.5 * 1250), 'first retry: 5 s plus up to 25 %')
  t.equal(mid(1), 10_000)
  t.equal(mid(2), 20_000)
  t.equal(mid(3), 40_000)
  t.ok(mid(4) >= 45_000 && mid(4) <= 60_000, 'then held near the cap')
  for (let a = 1; a < 4; a++) t.ok(mid(a) > mid(a - 1), `attempt ${a} waits longer than attempt ${a - 1}`)
})

t.test('jitter spreads watches dropped together', async (t) => {
  const delays = new Set(Array.from({ length: 20 }, (_, i) => backoffDelay(2, spec, () => i / 20)))
  t.ok(delays.size > 10, `${delays.size} distinct delays for 20 watches`)
  t.equal(backoffDelay(0, { baseMs: 50, maxMs: 400 }, () => 1), 63, 'small configured values are honoured')
  t.equal(backoffDelay(10, { baseMs: 50, maxMs: 400 }, () => 0), 300)
})

const crashPod = (container: Record<string, unknown>) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'a' },
  spec: { containers: [{ name: 'web', image: 'x' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [{ name: 'web', image: 'x', ...container }] },
})

t.test('a crash-looping container stays failed while it briefly runs between back-offs', async (t) => {
  const between = crashPod({ ready: false, restartCount: 3, state: { running: { startedAt: '2026-11-23T10:00:00Z' } }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } })
  t.match(deriveStatus(between), { status: 'failed', message: /CrashLoopBackOff: restarted 3 times, last exit Error \(code 1\)/ })
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'a', generation: 1 }, spec: { replicas: 1 }, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 0, availableReplicas: 0 } }
  t.match(deriveStatus(deployment, { pods: [between] }), { status: 'failed', message: /pod web-1 container web: CrashLoopBackOff/ })
  t.match(deriveStatus(crashPod({ ready: false, restartCount: 1, state: { running: {} }, lastState: { terminated: { exitCode: 1 } } })), { status: 'failed' }, 'from the first restart after a crash (the back-off follows)')
  t.match(deriveStatus(crashPod({ ready: false, restartCount: 0, state: { running: {} } })), { status: 'pending' }, 'never restarted: still starting')
  t.match(deriveStatus(crashPod({ ready: true, restartCount: 5, state: { running: {} }, lastState: { terminated: { exitCode: 1 } } })), { status: 'pending' }, 'ready again (the pod condition lags): not stuck')
  t.match(deriveStatus(crashPod({ ready: false, restartCount: 5, state: { running: {} }, lastState: { terminated: { exitCode: 0, reason: 'Completed' } } })), { status: 'pending' }, 'clean exits are not crashes')
})
