// The follower's reading of a build pod and Job, fed by hand through a stand-in for the watch hub (no
// cluster): which container failed and how, the deadline, a Job deleted, a container stuck waiting (said
// once), and stop().
import t from 'tap'
import { BuildFollower, type FollowerDeps } from '../../src/services/build/follower.ts'
import type { StreamListener, StreamKey, WatchHub } from '../../src/kube/watch-hub.ts'

function fakeHub() {
  const listeners: Array<{ key: StreamKey; l: StreamListener }> = []
  const hub = {
    subscribe(key: StreamKey, l: StreamListener) { listeners.push({ key, l }); return () => { listeners.splice(listeners.findIndex((x) => x.l === l), 1) } },
    isSynced: () => false, object: () => undefined, objects: () => [],
  } as unknown as WatchHub
  const send = (kind: 'Pod' | 'Job', type: 'ADDED' | 'MODIFIED' | 'DELETED', o: object) => {
    for (const { key, l } of [...listeners]) if (key.kind === kind) l.event(type, o as never)
  }
  return { hub, send, count: () => listeners.length }
}

const labels = { 'orchestrator.build-id': 'b1' }
const pod = (phase: string, init: object[], main: object[] = []) => ({ metadata: { name: 'build-b1-x', labels }, status: { phase, initContainerStatuses: init, containerStatuses: main } })
const done = (name: string, exitCode = 0, reason = 'Completed') => ({ name, state: { terminated: { exitCode, reason } } })
const waiting = (name: string, reason: string, message = '') => ({ name, state: { waiting: { reason, message } } })

function follower(hub: WatchHub, extra: Partial<FollowerDeps> = {}) {
  const waits: string[] = []
  const f = new BuildFollower({
    watch: hub, clusterKey: 'o\nc', kc: async () => { throw new Error('no logs here') }, namespace: 'ns', buildId: 'b1',
    maxLineBytes: 1000, connectTimeoutMs: 100, drainMs: 50,
    onContainer: () => undefined, onLine: () => undefined, onWaiting: (c, r) => waits.push(`${c}:${r}`), ...extra,
  })
  return { f, waits }
}

t.test('a pod that fails in git-fetch: the failed container and its exit code', async (t) => {
  const { hub, send, count } = fakeHub()
  const { f } = follower(hub)
  const outcome = f.run()
  send('Pod', 'MODIFIED', pod('Failed', [done('git-init'), done('git-fetch', 128, 'Error'), waiting('git-checkout', 'PodInitializing')], [waiting('build', 'PodInitializing')]))
  // git-init started, so its log is read: the stand-in cluster cannot serve logs, which the follower survives.
  t.same(await outcome, { kind: 'failed', container: 'git-fetch', exitCode: 128, reason: 'Error', message: null })
  t.equal(count(), 0, 'the watch listeners are released')
})

t.test('the deadline, a deleted Job, success', async (t) => {
  for (const [job, type, expected] of [
    [{ metadata: { name: 'build-b1' }, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }] } }, 'MODIFIED', { kind: 'deadline' }],
    [{ metadata: { name: 'build-b1' } }, 'DELETED', { kind: 'gone' }],
    [{ metadata: { name: 'build-b1' }, status: { conditions: [{ type: 'Complete', status: 'True' }] } }, 'MODIFIED', { kind: 'succeeded' }],
  ] as const) {
    const { hub, send } = fakeHub()
    const { f } = follower(hub)
    const outcome = f.run()
    send('Job', type, job)
    t.same(await outcome, expected, JSON.stringify(expected))
  }
})

t.test('a container that cannot start is reported once per reason; stop() ends the follow', async (t) => {
  const { hub, send } = fakeHub()
  const { f, waits } = follower(hub)
  const outcome = f.run()
  const stuck = pod('Pending', [waiting('git-init', 'ErrImagePull', 'pull access denied')])
  send('Pod', 'MODIFIED', stuck)
  send('Pod', 'MODIFIED', stuck)
  send('Pod', 'MODIFIED', pod('Pending', [waiting('git-init', 'ImagePullBackOff')]))
  send('Pod', 'MODIFIED', pod('Pending', [waiting('git-init', 'PodInitializing')]))
  t.same(waits, ['git-init:ErrImagePull', 'git-init:ImagePullBackOff'])
  f.stop()
  t.same(await outcome, { kind: 'stopped' })
})

t.test('pods of other builds are not this build\'s', async (t) => {
  const { hub, send } = fakeHub()
  const { f } = follower(hub)
  const outcome = f.run()
  send('Pod', 'MODIFIED', { metadata: { name: 'build-b2-x', labels: { 'orchestrator.build-id': 'b2' } }, status: { phase: 'Failed', initContainerStatuses: [done('git-init', 1, 'Error')] } })
  send('Pod', 'MODIFIED', pod('Succeeded', [], []))
  t.same(await outcome, { kind: 'succeeded' })
})
