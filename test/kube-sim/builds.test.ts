// Build Jobs run for real in the simulator: the git init containers clone from a git server on loopback
// with the machine's git, the builder pushes a real image to a registry on loopback with the mounted
// credentials, and the pod, Job, logs and garbage collection behave as in a cluster. The Secret and Job
// are the shape of /tmp/team/build-contract.md (what the build service creates).
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { BatchV1Api, CoreV1Api, KubeConfig, type V1Job, type V1Pod } from '@kubernetes/client-node'
import { startGitServer } from '../helpers/git-server.ts'
import { startDistributionRegistry, startTestRegistry } from '../helpers/test-registry.ts'
import { startKubeSim } from './index.ts'
import { raw, rawStream, waitFor } from './test-helpers.ts'

const sim = await startKubeSim()
const git = await startGitServer()
const registry = await startTestRegistry({ auth: 'basic' })
const bearer = await startTestRegistry({ auth: 'bearer' })
t.teardown(async () => { await sim.close(); await git.close(); await registry.close(); await bearer.close() })

const kc = new KubeConfig()
kc.loadFromString(sim.kubeconfigYaml())
const core = kc.makeApiClient(CoreV1Api)
const batch = kc.makeApiClient(BatchV1Api)
const ns = 'builds'
await core.createNamespace({ body: { metadata: { name: ns } } })

const app = await git.addRepo('app', {
  Dockerfile: 'FROM alpine:3.20\nCOPY . /app\nRUN make\nCMD ["/app/run"]\n',
  'run.sh': '#!/bin/sh\necho hi\n',
  'nested/Dockerfile.web': 'FROM nginx:1.27\nCOPY nested/site /usr/share/nginx/html\n',
  'nested/site/index.html': '<h1>hi</h1>\n',
})
await git.addRepo('nodockerfile', { 'README.md': 'no Dockerfile here\n' })

interface BuildSpec {
  repo: string
  ref: string
  image: string
  dockerConfigJson?: string
  contextDir?: string
  dockerfile?: string
  insecure?: boolean
  deadline?: number
  /** Create only the Job (the Secret comes later, or never). */
  withoutSecret?: boolean
}

const labels = (id: string) => ({ 'app.kubernetes.io/managed-by': 'cluster-workflow-orchestrator', 'app.kubernetes.io/component': 'image-build', 'orchestrator.build-id': id })

/** Creates the contract's Secret and Job (and owns the Secret by the Job), as the build service does. */
async function startBuild(id: string, b: BuildSpec): Promise<V1Job> {
  const name = `build-${id}`
  const dockerfile = b.dockerfile ?? 'Dockerfile'
  const dfDir = dockerfile.includes('/') ? dockerfile.slice(0, dockerfile.lastIndexOf('/')) : ''
  if (!b.withoutSecret) await core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name, labels: labels(id) }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(b.dockerConfigJson ?? registry.dockerConfigJson()).toString('base64') } },
  })
  const gitImage = 'alpine/git:2.47.2'
  const mount = [{ name: 'workspace', mountPath: '/workspace' }]
  const job = await batch.createNamespacedJob({
    namespace: ns,
    body: {
      metadata: { name, labels: labels(id) },
      spec: {
        backoffLimit: 0, activeDeadlineSeconds: b.deadline ?? 600, ttlSecondsAfterFinished: 600,
        template: {
          metadata: { labels: labels(id) },
          spec: {
            restartPolicy: 'Never',
            volumes: [
              { name: 'workspace', emptyDir: {} },
              { name: 'docker-config', secret: { secretName: name, items: [{ key: '.dockerconfigjson', path: 'config.json' }] } },
              { name: 'buildkit-state', emptyDir: {} },
            ],
            initContainers: [
              { name: 'git-init', image: gitImage, args: ['init', '-q', '/workspace/src'], volumeMounts: mount },
              { name: 'git-fetch', image: gitImage, args: ['-C', '/workspace/src', 'fetch', '--depth', '1', '--no-tags', b.repo, b.ref], volumeMounts: mount },
              { name: 'git-checkout', image: gitImage, args: ['-C', '/workspace/src', 'checkout', '-q', 'FETCH_HEAD'], volumeMounts: mount },
            ],
            containers: [{
              name: 'build', image: 'moby/buildkit:v0.18.2-rootless', command: ['buildctl-daemonless.sh'],
              args: [
                'build', '--progress', 'plain', '--frontend', 'dockerfile.v0',
                '--local', `context=/workspace/src/${b.contextDir ?? ''}`.replace(/\/$/, ''), '--local', `dockerfile=/workspace/src/${dfDir}`.replace(/\/$/, ''),
                '--opt', `filename=${dockerfile.split('/').pop()}`, '--opt', 'build-arg:VERSION=1.0',
                '--output', `type=image,name=${b.image},push=true${b.insecure === false ? '' : ',registry.insecure=true'}`,
              ],
              env: [{ name: 'BUILDKITD_FLAGS', value: '--oci-worker-no-process-sandbox' }, { name: 'DOCKER_CONFIG', value: '/home/user/.docker' }],
              volumeMounts: [
                { name: 'workspace', mountPath: '/workspace' },
                { name: 'docker-config', mountPath: '/home/user/.docker', readOnly: true },
                { name: 'buildkit-state', mountPath: '/home/user/.local/share/buildkit' },
              ],
              securityContext: { runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'Unconfined' }, appArmorProfile: { type: 'Unconfined' } },
            }],
          },
        },
      },
    },
  })
  if (!b.withoutSecret) await core.patchNamespacedSecret({
    name, namespace: ns,
    body: [{ op: 'add', path: '/metadata/ownerReferences', value: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata!.uid!, controller: true, blockOwnerDeletion: true }] }],
  })
  return job
}

const jobCondition = async (id: string): Promise<string> => waitFor(`job build-${id} finished`, async () => {
  const j = await batch.readNamespacedJob({ name: `build-${id}`, namespace: ns })
  return j.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.type
}, 20_000)

const podOf = async (id: string): Promise<V1Pod> => waitFor(`pod of build-${id}`, async () => (await core.listNamespacedPod({ namespace: ns, labelSelector: `orchestrator.build-id=${id}` })).items[0])

async function logs(pod: V1Pod, container: string): Promise<string> {
  const r = await raw(sim, 'GET', `/api/v1/namespaces/${ns}/pods/${pod.metadata!.name}/log?container=${container}`)
  return r.text
}

const digestIn = (log: string) => /exporting manifest (sha256:[a-f0-9]{64}) done/.exec(log)?.[1]

t.test('success: clone, build, push; the manifest is in the registry under the printed digest', async (t) => {
  const image = `${registry.host}/team/app:v1`
  await startBuild('ok1', { repo: app.url, ref: 'refs/heads/main', image })
  t.equal(await jobCondition('ok1'), 'Complete')
  const pod = await podOf('ok1')
  t.equal(pod.status?.phase, 'Succeeded')
  t.same(pod.status?.initContainerStatuses?.map((s) => [s.name, s.state?.terminated?.exitCode, s.ready]), [['git-init', 0, true], ['git-fetch', 0, true], ['git-checkout', 0, true]])
  t.equal(pod.status?.containerStatuses?.[0].state?.terminated?.exitCode, 0)
  const log = await logs(pod, 'build')
  t.match(log, /^#1 \[internal\] load build definition from Dockerfile$/m)
  t.match(log, /^#\d+ \[1\/3\] FROM docker\.io\/library\/alpine:3\.20@sha256:/m)
  t.match(log, /^#\d+ \[3\/3\] RUN make$/m)
  t.match(log, /^#\d+ exporting to image$/m)
  t.match(log, /^#\d+ pushing layers$/m)
  const digest = digestIn(log)!
  t.match(log, new RegExp(`^#\\d+ pushing manifest for ${image.replace(/[.]/g, '\\.')}@${digest}$`, 'm'))
  t.match(log, /^#\d+ DONE \d+\.\ds$/m)
  const head = await fetch(`${registry.url}/v2/team/app/manifests/v1`, { method: 'HEAD', headers: { authorization: `Basic ${Buffer.from(`${registry.username}:${registry.password}`).toString('base64')}` } })
  t.equal(head.status, 200)
  t.equal(head.headers.get('docker-content-digest'), digest, 'the registry serves the digest the builder printed')
  t.equal(registry.manifest('team/app', digest)?.mediaType, 'application/vnd.docker.distribution.manifest.v2+json')

  // The same input builds the same image.
  await startBuild('ok2', { repo: app.url, ref: app.commit, image: `${registry.host}/team/app:v2` })
  t.equal(await jobCondition('ok2'), 'Complete')
  t.equal(digestIn(await logs(await podOf('ok2'), 'build')), digest, 'same Dockerfile and context → same digest')
  t.equal(registry.manifest('team/app', 'v2')?.digest, digest)
})

t.test('bearer registry: the builder fetches a token with the mounted login; a wrong login is refused with 401', async (t) => {
  await startBuild('tok1', { repo: app.url, ref: 'refs/heads/main', image: `${bearer.host}/team/app:v1`, dockerConfigJson: bearer.dockerConfigJson() })
  t.equal(await jobCondition('tok1'), 'Complete')
  t.ok(bearer.manifest('team/app', 'v1'))
  t.ok(bearer.requests.some((r) => r.path.startsWith('/token?') && r.status === 200))

  await startBuild('tok2', { repo: app.url, ref: 'refs/heads/main', image: `${bearer.host}/team/app:v2`, dockerConfigJson: bearer.dockerConfigJson({ username: bearer.username, password: 'wrong' }) })
  t.equal(await jobCondition('tok2'), 'Failed')
  const pod = await podOf('tok2')
  t.equal(pod.status?.containerStatuses?.[0].state?.terminated?.exitCode, 1)
  t.match(await logs(pod, 'build'), /^ERROR: failed to solve: failed to push 127\.0\.0\.1:\d+\/team\/app:v2: failed to authorize: failed to fetch oauth token: unexpected status from GET request to .*: 401 Unauthorized$/m)
  t.equal(bearer.manifest('team/app', 'v2'), undefined)
})

t.test('basic registry with bad credentials: push refused (401), exit 1, Job Failed', async (t) => {
  await startBuild('bad1', { repo: app.url, ref: 'refs/heads/main', image: `${registry.host}/team/app:bad`, dockerConfigJson: registry.dockerConfigJson({ username: 'builder', password: 'nope' }) })
  t.equal(await jobCondition('bad1'), 'Failed')
  const pod = await podOf('bad1')
  t.equal(pod.status?.phase, 'Failed')
  const log = await logs(pod, 'build')
  t.match(log, /^ERROR: failed to solve: failed to push 127\.0\.0\.1:\d+\/team\/app:bad: unexpected status from HEAD request to http:\/\/127\.0\.0\.1:\d+\/v2\/team\/app\/blobs\/sha256:[a-f0-9]+: 401 Unauthorized$/m)
  t.notOk(log.includes('nope'), 'no credential in the log')
  t.equal(registry.manifest('team/app', 'bad'), undefined)
})

t.test('clone failures: missing branch and wrong URL fail git-fetch with git\'s message and exit code 128', async (t) => {
  await startBuild('nobranch', { repo: app.url, ref: 'refs/heads/nope', image: `${registry.host}/team/app:x` })
  t.equal(await jobCondition('nobranch'), 'Failed')
  const pod = await podOf('nobranch')
  t.equal(pod.status?.phase, 'Failed')
  const st = Object.fromEntries((pod.status?.initContainerStatuses ?? []).map((s) => [s.name, s.state]))
  t.equal(st['git-init']?.terminated?.exitCode, 0)
  t.equal(st['git-fetch']?.terminated?.exitCode, 128)
  t.equal(st['git-fetch']?.terminated?.reason, 'Error')
  t.equal(st['git-checkout']?.waiting?.reason, 'PodInitializing', 'later init containers never start')
  t.equal(pod.status?.containerStatuses?.[0].state?.waiting?.reason, 'PodInitializing')
  t.match(await logs(pod, 'git-fetch'), /fatal: couldn't find remote ref refs\/heads\/nope/)
  t.equal((await raw(sim, 'GET', `/api/v1/namespaces/${ns}/pods/${pod.metadata!.name}/log?container=build`)).status, 400, 'the build container never started')

  await startBuild('badurl', { repo: `${git.url}/missing.git`, ref: 'refs/heads/main', image: `${registry.host}/team/app:x` })
  t.equal(await jobCondition('badurl'), 'Failed')
  const pod2 = await podOf('badurl')
  t.match(await logs(pod2, 'git-fetch'), /fatal: repository 'http:\/\/127\.0\.0\.1:\d+\/missing\.git\/' not found/)

  await startBuild('offsite', { repo: 'https://git.example.invalid/team/app.git', ref: 'refs/heads/main', image: `${registry.host}/team/app:x` })
  t.equal(await jobCondition('offsite'), 'Failed')
  t.match(await logs(await podOf('offsite'), 'git-fetch'), /Could not resolve host: git\.example\.invalid/)
})

t.test('missing Dockerfile fails the build like BuildKit', async (t) => {
  const repo = `${git.url}/nodockerfile.git`
  await startBuild('nodf', { repo, ref: 'refs/heads/main', image: `${registry.host}/team/app:x` })
  t.equal(await jobCondition('nodf'), 'Failed')
  const log = await logs(await podOf('nodf'), 'build')
  t.match(log, /^ERROR: failed to solve: failed to read dockerfile: open Dockerfile: no such file or directory$/m)

  // A Dockerfile in a subdirectory, with the context at the root, works.
  await startBuild('subdir', { repo: app.url, ref: 'refs/heads/main', image: `${registry.host}/team/web:1`, dockerfile: 'nested/Dockerfile.web' })
  t.equal(await jobCondition('subdir'), 'Complete')
  t.match(await logs(await podOf('subdir'), 'build'), /load build definition from Dockerfile\.web/)
})

t.test('failingBuilds.at: build and push phases fail with BuildKit\'s lines', async (t) => {
  sim.failingBuilds.at('team/failbuild', 'build')
  sim.failingBuilds.at(`${registry.host}/team/failpush`, 'push')
  t.teardown(() => { sim.failingBuilds.clear('team/failbuild'); sim.failingBuilds.clear(`${registry.host}/team/failpush`) })
  await startBuild('fb', { repo: app.url, ref: 'refs/heads/main', image: `${registry.host}/team/failbuild:1` })
  await startBuild('fp', { repo: app.url, ref: 'refs/heads/main', image: `${registry.host}/team/failpush:1` })
  t.equal(await jobCondition('fb'), 'Failed')
  t.equal(await jobCondition('fp'), 'Failed')
  const fb = await logs(await podOf('fb'), 'build')
  t.match(fb, /^ERROR: failed to solve: process "\/bin\/sh -c make" did not complete successfully: exit code: 2$/m)
  t.notMatch(fb, /exporting to image/)
  const fp = await logs(await podOf('fp'), 'build')
  t.match(fp, /^#\d+ pushing layers$/m)
  t.match(fp, /^ERROR: failed to solve: failed to push .*team\/failpush:1: /m)
  t.equal(registry.manifest('team/failpush', '1'), undefined)
})

t.test('hold/release: a test sees each phase and the container states of that moment', async (t) => {
  const image = `${registry.host}/team/held:1`
  const clone = sim.failingBuilds.hold(image, 'clone')
  const build = sim.failingBuilds.hold(image, 'build')
  const push = sim.failingBuilds.hold(image, 'push')
  await startBuild('held', { repo: app.url, ref: 'refs/heads/main', image })
  const at = await clone.reached
  t.same(at, { namespace: ns, pod: at.pod, image, phase: 'clone' })
  let pod = await waitFor('git-fetch running', async () => {
    const p = await core.readNamespacedPod({ name: at.pod, namespace: ns })
    return p.status?.initContainerStatuses?.find((s) => s.name === 'git-fetch')?.state?.running ? p : undefined
  })
  t.equal(pod.status?.phase, 'Pending')
  t.equal(pod.status?.initContainerStatuses?.[0].state?.terminated?.exitCode, 0, 'git-init done')
  clone.release()
  await build.reached
  pod = await core.readNamespacedPod({ name: at.pod, namespace: ns })
  t.equal(pod.status?.phase, 'Running')
  t.ok(pod.status?.containerStatuses?.[0].state?.running, 'build running')
  t.match(await logs(pod, 'build'), /\[2\/3\] COPY \. \/app\n$/, 'held right after the first step header')
  build.release()
  await push.reached
  t.match(await logs(pod, 'build'), /pushing layers\n$/)
  t.equal(registry.manifest('team/held', '1'), undefined, 'nothing pushed yet')
  push.release()
  t.equal(await jobCondition('held'), 'Complete')
  t.ok(registry.manifest('team/held', '1'))
})

t.test('follow: the build log streams while the container runs and ends when it exits', async (t) => {
  const image = `${registry.host}/team/follow:1`
  const hold = sim.failingBuilds.hold(image, 'push')
  await startBuild('follow', { repo: app.url, ref: 'refs/heads/main', image })
  const at = await hold.reached
  const stream = rawStream(sim, `/api/v1/namespaces/${ns}/pods/${at.pod}/log?container=build&follow=true`)
  t.teardown(() => stream.close())
  t.equal(await stream.status, 200)
  await waitFor('lines up to the held push', () => stream.lines.at(-1)?.endsWith('pushing layers'))
  t.notOk(stream.lines.some((l) => l.includes('pushing manifest')))
  hold.release()
  await stream.ended
  t.match(stream.lines.at(-1), /^#\d+ DONE \d+\.\ds$/, 'the stream ends when the container exits, after its last line')
  t.ok(stream.lines.some((l) => l.includes('pushing manifest for')))
})

t.test('deleting the Job kills the running clone, removes the pod and its files, and GC deletes the Secret', async (t) => {
  for (const policy of ['Background', 'Foreground'] as const) {
    const id = `del-${policy.toLowerCase()}`
    const image = `${registry.host}/team/${id}:1`
    const hold = sim.failingBuilds.hold(image, policy === 'Background' ? 'clone' : 'build')
    await startBuild(id, { repo: app.url, ref: 'refs/heads/main', image })
    const at = await hold.reached
    const before = new Set(readdirSync(tmpdir()).filter((d) => d.startsWith('kube-sim-pod-')))
    t.ok(before.size > 0, 'the pod has a sandbox on the host')
    await batch.deleteNamespacedJob({ name: `build-${id}`, namespace: ns, propagationPolicy: policy })
    await waitFor(`${id} pod gone`, async () => (await core.listNamespacedPod({ namespace: ns, labelSelector: `orchestrator.build-id=${id}` })).items.length === 0)
    await waitFor(`${id} job gone`, async () => !(await batch.listNamespacedJob({ namespace: ns })).items.some((j) => j.metadata?.name === `build-${id}`))
    await waitFor(`${id} secret collected`, async () => !(await core.listNamespacedSecret({ namespace: ns })).items.some((s) => s.metadata?.name === `build-${id}`))
    t.pass(`${policy}: pod, Job and Secret gone (held in ${at.phase})`)
    await waitFor(`${id} sandbox removed`, () => [...before].some((d) => !existsSync(join(tmpdir(), d))))
    hold.release()
    t.equal(registry.manifest(`team/${id}`, '1'), undefined, 'the killed build pushed nothing')
  }
})

t.test('activeDeadlineSeconds fails the Job and kills the build', async (t) => {
  const image = `${registry.host}/team/deadline:1`
  const hold = sim.failingBuilds.hold(image, 'clone')
  t.teardown(() => hold.release())
  // Timestamps have second precision, so a 2 s deadline fires 1–2 s after the start: after the clone is held.
  await startBuild('deadline', { repo: app.url, ref: 'refs/heads/main', image, deadline: 2 })
  await hold.reached
  t.equal(await jobCondition('deadline'), 'Failed')
  const j = await batch.readNamespacedJob({ name: 'build-deadline', namespace: ns })
  t.equal(j.status?.conditions?.find((c) => c.type === 'Failed')?.reason, 'DeadlineExceeded')
  await waitFor('deadline pod gone', async () => (await core.listNamespacedPod({ namespace: ns, labelSelector: 'orchestrator.build-id=deadline' })).items.length === 0)
})

t.test('a missing Secret keeps the pod waiting with FailedMount until it exists, as the kubelet does', async (t) => {
  const image = `${registry.host}/team/nosecret:1`
  await startBuild('nosecret', { repo: app.url, ref: 'refs/heads/main', image, withoutSecret: true })
  const pod = await podOf('nosecret')
  const failed = await waitFor('FailedMount event', async () => (await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${pod.metadata!.name}` })).items.find((e) => e.reason === 'FailedMount'))
  t.equal(failed.message, 'MountVolume.SetUp failed for volume "docker-config" : secret "build-nosecret" not found')
  const now = await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: ns })
  t.equal(now.status?.phase, 'Pending')
  t.notOk(now.status?.initContainerStatuses?.some((s) => s.state?.running || s.state?.terminated), 'no container started')
  await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'build-nosecret' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(registry.dockerConfigJson()).toString('base64') } } })
  t.equal(await jobCondition('nosecret'), 'Complete', 'the build runs once the Secret exists')
})

t.test('kubectl: logs job/<name> -c git-fetch and get pods', async (t) => {
  const probe = await new Promise<boolean>((resolve) => execFile('kubectl', ['version', '--client'], (err) => resolve(!err)))
  if (!probe) { t.pass('kubectl not on PATH: skipped'); return }
  const dir = mkdtempSync(join(tmpdir(), 'kube-sim-kubectl-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const k = (args: string[]) => new Promise<{ code: number; out: string }>((resolve) => execFile('kubectl', ['--kubeconfig', sim.kubeconfigPath(), '--cache-dir', join(dir, 'cache'), ...args], { timeout: 20_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr })))
  const logsRun = await k(['-n', ns, 'logs', 'job/build-nobranch', '-c', 'git-fetch'])
  t.match(logsRun.out, /couldn't find remote ref refs\/heads\/nope/)
  const build = await k(['-n', ns, 'logs', 'job/build-ok1', '-c', 'build'])
  t.match(build.out, /pushing manifest for/)
  const pods = await k(['-n', ns, 'get', 'pods', '-l', 'orchestrator.build-id=nobranch'])
  t.equal(pods.code, 0)
  t.match(pods.out, /build-nobranch-\w+\s+0\/1\s+Init:Error\s+0/)
  const ok = await k(['-n', ns, 'get', 'pods', '-l', 'orchestrator.build-id=ok1'])
  t.match(ok.out, /build-ok1-\w+\s+0\/1\s+Completed\s+0/)
})

t.test('the reference registry (Debian docker-registry with htpasswd) accepts the builder\'s push', async (t) => {
  const dist = await startDistributionRegistry()
  if ('skip' in dist) { t.pass(`skipped: ${dist.skip}`); return }
  t.teardown(() => dist.close())
  const image = `${dist.host}/team/app:ref`
  await startBuild('distribution', { repo: app.url, ref: 'refs/heads/main', image, dockerConfigJson: dist.dockerConfigJson() })
  t.equal(await jobCondition('distribution'), 'Complete')
  const digest = digestIn(await logs(await podOf('distribution'), 'build'))
  const head = await fetch(`${dist.url}/v2/team/app/manifests/ref`, {
    method: 'HEAD',
    headers: { authorization: `Basic ${Buffer.from(`${dist.username}:${dist.password}`).toString('base64')}`, accept: 'application/vnd.docker.distribution.manifest.v2+json' },
  })
  t.equal(head.status, 200)
  t.equal(head.headers.get('docker-content-digest'), digest, 'distribution computes the digest the builder printed')
  await startBuild('distribution-bad', { repo: app.url, ref: 'refs/heads/main', image: `${dist.host}/team/app:bad`, dockerConfigJson: dist.dockerConfigJson({ username: dist.username, password: 'wrong' }) })
  t.equal(await jobCondition('distribution-bad'), 'Failed')
  t.match(await logs(await podOf('distribution-bad'), 'build'), /failed to push .*: 401 Unauthorized$/m)
})
