// The pure parts of a build, without a cluster: the Job and Secret shape of the contract, the request
// checks, the log → phase/progress mapping, the masking of secrets and the capped log.
import t from 'tap'
import { buildJob, buildSecret, builderArgs, dockerConfigJson, fetchRef, ownedByJob, BUILD_SELECTOR } from '../../src/kube/build-job.ts'
import { checkBuildRequest, relativePath } from '../../src/services/build/request.ts'
import { advance, builderLine, containerStarted, exportedManifest, failedWhilePushing, isErrorLine, pushedManifest, type BuildState } from '../../src/services/build/progress.ts'
import { buildMask, loginForms, maskShapes } from '../../src/services/build/masking.ts'
import { BuildLog } from '../../src/services/build/build-log.ts'
import { BadRequest } from '../../src/errors.ts'

const config = { gitImage: 'alpine/git:2.47.2', builderImage: 'moby/buildkit:v0.18.2-rootless', activeDeadlineSeconds: 1800, ttlSecondsAfterFinished: 600, cpuRequest: '500m', cpuLimit: '2', memoryRequest: '512Mi', memoryLimit: '4Gi' }
const spec = {
  buildId: 'b1', namespace: 'ci', repoUrl: 'https://git.example.com/acme/api.git', branch: 'main', commit: null, contextDir: 'services/api',
  dockerfile: 'services/api/docker/Dockerfile.prod', buildArgs: { VERSION: '1.2.3' }, imageRef: 'reg.example.com:5000/acme/api:v1', insecureRegistry: true,
}

t.test('the Job follows the contract: init containers clone, rootless BuildKit builds and pushes', async (t) => {
  const job = buildJob(spec, config) as any
  t.equal(job.metadata.name, 'build-b1')
  t.same(job.metadata.labels, { 'app.kubernetes.io/managed-by': 'cluster-workflow-orchestrator', 'app.kubernetes.io/component': 'image-build', 'orchestrator.build-id': 'b1' })
  t.same(job.spec.template.metadata.labels, job.metadata.labels, 'the pod carries the labels too')
  t.match(job.spec, { backoffLimit: 0, activeDeadlineSeconds: 1800, ttlSecondsAfterFinished: 600 })
  const pod = job.spec.template.spec
  t.equal(pod.restartPolicy, 'Never')
  t.same(pod.volumes.map((v: any) => v.name), ['workspace', 'docker-config', 'buildkit-state'])
  t.same(pod.volumes[1].secret, { secretName: 'build-b1', items: [{ key: '.dockerconfigjson', path: 'config.json' }] })
  t.same(pod.initContainers.map((c: any) => [c.name, c.image, c.command]), [['git-init', 'alpine/git:2.47.2', undefined], ['git-fetch', 'alpine/git:2.47.2', undefined], ['git-checkout', 'alpine/git:2.47.2', undefined]])
  t.same(pod.initContainers[1].args, ['-C', '/workspace/src', 'fetch', '--depth', '1', '--no-tags', 'https://git.example.com/acme/api.git', 'refs/heads/main'])
  t.same(pod.initContainers[2].args, ['-C', '/workspace/src', 'checkout', '-q', 'FETCH_HEAD'])
  const build = pod.containers[0]
  t.same(build.command, ['buildctl-daemonless.sh'])
  t.same(build.args, [
    'build', '--progress', 'plain', '--frontend', 'dockerfile.v0',
    '--local', 'context=/workspace/src/services/api', '--local', 'dockerfile=/workspace/src/services/api/docker',
    '--opt', 'filename=Dockerfile.prod', '--opt', 'build-arg:VERSION=1.2.3',
    '--output', 'type=image,name=reg.example.com:5000/acme/api:v1,push=true,registry.insecure=true',
  ])
  t.same(build.env, [{ name: 'BUILDKITD_FLAGS', value: '--oci-worker-no-process-sandbox' }, { name: 'DOCKER_CONFIG', value: '/home/user/.docker' }])
  t.same(build.volumeMounts.find((m: any) => m.name === 'docker-config'), { name: 'docker-config', mountPath: '/home/user/.docker', readOnly: true })
  t.match(build.securityContext, { runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'Unconfined' }, appArmorProfile: { type: 'Unconfined' } })
  t.same(build.resources, { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '4Gi' } })
  t.equal(BUILD_SELECTOR, 'app.kubernetes.io/managed-by=cluster-workflow-orchestrator,app.kubernetes.io/component=image-build')
})

t.test('context at the root, https registry, a commit instead of a branch', async (t) => {
  const args = builderArgs({ ...spec, contextDir: '.', dockerfile: 'Dockerfile', buildArgs: {}, insecureRegistry: false })
  t.same(args.slice(5), ['--local', 'context=/workspace/src', '--local', 'dockerfile=/workspace/src', '--opt', 'filename=Dockerfile', '--output', 'type=image,name=reg.example.com:5000/acme/api:v1,push=true'])
  t.equal(fetchRef({ branch: 'main', commit: 'a'.repeat(40) }), 'a'.repeat(40))
  t.equal(fetchRef({ branch: null, commit: null }), 'HEAD')
})

t.test('the Secret holds a dockerconfigjson with one auths entry; anonymous registries get none', async (t) => {
  const json = dockerConfigJson('reg.example.com:5000', { username: 'bot', secret: 'pa55' })
  t.same(JSON.parse(json), { auths: { 'reg.example.com:5000': { auth: Buffer.from('bot:pa55').toString('base64') } } })
  t.same(JSON.parse(dockerConfigJson('docker.io', { username: 'u', secret: 'p' })).auths['https://index.docker.io/v1/'], { auth: Buffer.from('u:p').toString('base64') })
  t.same(JSON.parse(dockerConfigJson('x', null)), { auths: {} })
  const secret = buildSecret(spec, json) as any
  t.equal(secret.type, 'kubernetes.io/dockerconfigjson')
  t.equal(Buffer.from(secret.data['.dockerconfigjson'], 'base64').toString(), json)
  t.same(secret.metadata.labels['orchestrator.build-id'], 'b1')
  t.match(ownedByJob({ metadata: { name: 'build-b1', uid: 'u-1' } }).metadata.ownerReferences[0], { apiVersion: 'batch/v1', kind: 'Job', name: 'build-b1', uid: 'u-1' })
})

t.test('request checks: paths stay inside the repository, names and refs are valid, sizes are bounded', async (t) => {
  const base = { repo_url: 'https://x/y.git', registry_id: 'r', image_name: 'acme/api', cluster: 'c' }
  const ok = checkBuildRequest({ ...base, context_dir: 'services/api/', dockerfile: 'docker/Dockerfile', branch: 'refs/heads/feature/x' })
  t.match(ok, { contextDir: 'services/api', dockerfile: 'services/api/docker/Dockerfile', branch: 'feature/x', imageTag: 'latest', namespace: 'default' })
  t.equal(relativePath('./a//b/', 'x'), 'a/b')
  const refused: Array<[object, RegExp]> = [
    [{ context_dir: '../etc' }, /context_dir must not contain "\.\."/],
    [{ context_dir: 'a/../../b' }, /context_dir/],
    [{ context_dir: '/abs' }, /context_dir must be relative/],
    [{ dockerfile: '../../Dockerfile' }, /dockerfile/],
    [{ dockerfile: 'a\\b' }, /dockerfile must not contain backslashes/],
    [{ dockerfile: '.' }, /dockerfile must name a file/],
    [{ branch: '-upload-pack=evil' }, /branch/],
    [{ branch: 'a..b' }, /branch/],
    [{ branch: 'x y' }, /branch/],
    [{ commit: 'abc123' }, /commit must be a full commit id/],
    [{ image_name: 'reg.example.com/acme/api' }, /must not name a registry host/],
    [{ image_name: 'Acme/API' }, /image_name must be lower-case/],
    [{ image_tag: '-bad' }, /image_tag/],
    [{ namespace: 'Bad_NS' }, /namespace/],
    [{ workflow_id: 'w' }, /go together/],
    [{ build_args: { '1BAD': 'x' } }, /build_args key/],
    [{ build_args: { A: 'line\nbreak' } }, /one line/],
    [{ build_args: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`K${i}`, 'v'])) }, /at most 64/],
    [{ build_args: { A: 'x'.repeat(20_000), B: 'y'.repeat(20_000) } }, /bytes in all/],
  ]
  for (const [extra, message] of refused) {
    let caught: unknown = null
    try { checkBuildRequest({ ...base, ...extra } as never) } catch (err) { caught = err }
    t.ok(caught instanceof BadRequest && message.test((caught as Error).message), `${JSON.stringify(extra).slice(0, 60)} → ${(caught as Error)?.message}`)
  }
})

t.test('log lines → phase and progress; never backwards', async (t) => {
  let s: BuildState = { status: 'pending', phase: null, progress: 0 }
  s = advance(s, containerStarted('git-init'))
  t.same(s, { status: 'cloning', phase: 'clone', progress: 2 })
  s = advance(s, containerStarted('git-fetch'))
  s = advance(s, containerStarted('build'))
  t.same(s, { status: 'building', phase: 'build', progress: 25 })
  s = advance(s, builderLine('#6 [2/3] RUN make')!)
  t.equal(s.status, 'building')
  t.ok(s.progress > 25 && s.progress < 80, `progress ${s.progress}`)
  const before = s.progress
  s = advance(s, builderLine('#5 [1/3] FROM docker.io/library/alpine')!)
  t.equal(s.progress, before, 'an earlier step does not move the bar back')
  t.equal(builderLine('#1 [internal] load build definition from Dockerfile'), null)
  s = advance(s, builderLine('#8 exporting to image')!)
  t.same({ status: s.status, phase: s.phase }, { status: 'pushing', phase: 'push' })
  s = advance(s, builderLine('#8 pushing manifest for reg:5000/acme/api:v1@sha256:' + 'a'.repeat(64))!)
  t.equal(s.progress, 95)
  s = advance(s, containerStarted('git-checkout'))
  t.same({ status: s.status, phase: s.phase, progress: s.progress }, { status: 'pushing', phase: 'push', progress: 95 }, 'a late clone line changes nothing')
  t.same(pushedManifest('#8 pushing manifest for reg:5000/acme/api:v1@sha256:' + 'b'.repeat(64) + ' 0.0s done'), { ref: 'reg:5000/acme/api:v1', digest: 'sha256:' + 'b'.repeat(64) })
  t.equal(exportedManifest('#8 exporting manifest sha256:' + 'c'.repeat(64) + ' done'), 'sha256:' + 'c'.repeat(64))
  t.ok(isErrorLine('ERROR: failed to solve: failed to read dockerfile: open Dockerfile: no such file or directory'))
  t.ok(isErrorLine("fatal: couldn't find remote ref refs/heads/nope"))
  t.notOk(isErrorLine('#5 [2/3] RUN echo error: not really'))
  t.ok(failedWhilePushing('ERROR: failed to solve: failed to push reg/acme/api:v1: unexpected status: 401 Unauthorized'))
  t.notOk(failedWhilePushing('ERROR: failed to solve: process "/bin/sh -c make" did not complete successfully: exit code: 2'))
})

t.test('masking: the login in every form, credentials in URLs, Authorization headers, token parameters', async (t) => {
  const login = { username: 'robot', secret: 'Sup3r-S3cret-pw' }
  const json = dockerConfigJson('reg:5000', login)
  const mask = buildMask(loginForms(login, json))
  const base64 = Buffer.from('robot:Sup3r-S3cret-pw').toString('base64')
  const lines = [
    'pushing with Sup3r-S3cret-pw',
    `auth ${base64}`,
    `config ${Buffer.from(json).toString('base64')}`,
    'fatal: unable to access https://user:hunter2@git.example.com/x.git/: 403',
    'fetching https://ghp_abcdefghijklmnop@github.com/acme/x.git',
    'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig',
    'GET https://reg/token?scope=x&access_token=abc123secret&x=1',
  ]
  const masked = lines.map(mask)
  for (const secret of ['Sup3r-S3cret-pw', base64, 'hunter2', 'ghp_abcdefghijklmnop', 'eyJhbGciOiJIUzI1NiJ9', 'abc123secret']) {
    t.notOk(masked.some((l) => l.includes(secret)), `${secret.slice(0, 8)}… is masked`)
  }
  t.match(masked[3], 'https://[redacted]@git.example.com/x.git/')
  t.equal(maskShapes('#5 [2/3] RUN make'), '#5 [2/3] RUN make', 'ordinary lines are untouched')
  t.equal(buildMask([])('no login here'), 'no login here')
})

t.test('the kept log is bounded: the start and the latest lines, the middle counted', async (t) => {
  const log = new BuildLog(10, 1_000_000)
  for (let i = 0; i < 25; i++) log.add({ phase: 'build', line: `line ${i}`, timestamp: new Date(0).toISOString() })
  const lines = log.lines().map((l) => l.line)
  t.ok(log.truncated)
  t.same(lines.slice(0, 5), ['line 0', 'line 1', 'line 2', 'line 3', 'line 4'])
  t.match(lines[5], /15 log lines left out/)
  t.same(lines.slice(6), ['line 20', 'line 21', 'line 22', 'line 23', 'line 24'])
  const bytes = new BuildLog(1000, 2000)
  for (let i = 0; i < 100; i++) bytes.add({ phase: 'build', line: 'x'.repeat(100), timestamp: '' })
  t.ok(bytes.truncated)
  t.ok(bytes.lines().reduce((n, l) => n + l.line.length, 0) < 2200, 'bytes bounded too')
  const small = new BuildLog(10, 10_000)
  small.add({ phase: 'clone', line: 'one', timestamp: '' })
  t.notOk(small.truncated)
  t.same(small.lines().map((l) => l.line), ['one'])
})
