// Git imports over smart HTTP on loopback (git http-backend): a compose file in a subfolder, a repository
// with only a Dockerfile, a missing branch, repositories over the byte and file limits, a private repository
// with a token (which appears nowhere afterwards), a redirect to a refused address, a URL that is no Git
// repository, and a host that never answers (the fetch is aborted at its time limit).
import t from 'tap'
import http from 'node:http'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { importFixture, WEB_AND_DB } from './fixture.ts'
import { startGitServer } from '../helpers/git-server.ts'
import { fetchRepository } from '../../src/services/import/git-fetch.ts'
import { OutboundPolicy } from '../../src/net/outbound-policy.ts'

const MAX_BYTES = 300_000
const f = await importFixture(t, { ALLOW_INSECURE_CLUSTERS: true, IMPORT_GIT_MAX_BYTES: MAX_BYTES, IMPORT_GIT_MAX_FILES: 50, IMPORT_GIT_TIMEOUT_MS: 20_000 })
const { owner, call } = f
const git = await startGitServer()
t.teardown(() => git.close())
const TOKEN = `ghp_${randomBytes(16).toString('hex')}`
const privateGit = await startGitServer({ auth: { username: 'x-access-token', password: TOKEN } })
t.teardown(() => privateGit.close())

/** A plain HTTP server on loopback answering every request with `handler`. */
async function httpServer(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function importGit(body: object) {
  const started = await f.analyze(owner, { source: 'git', ...body })
  if (started.status !== 201) throw new Error(`analyze answered ${started.status}: ${JSON.stringify(started.body)}`)
  const stream = await f.follow(owner, started.body.id)
  const session = (await call(owner, 'GET', `/v1/api/import/${started.body.id}`)).body
  return { started: started.body, stream, session }
}

t.test('a compose file in a subfolder (path), with an env_file beside it: cloning → analyzing → completed', async (t) => {
  const compose = WEB_AND_DB.replace('    depends_on:\n', '    env_file: ./web.env\n    depends_on:\n')
  const repo = await git.addRepo('shop', { 'deploy/compose.yaml': compose, 'deploy/web.env': 'LOG_LEVEL=debug\n', 'README.md': '# shop\n', 'src/app.js': 'console.log(1)\n' })
  const { started, stream, session } = await importGit({ url: repo.url, path: 'deploy' })
  t.match(started, { status: 'pending', url: repo.url, path: 'deploy', branch: null, commit: null })
  t.match(session, { status: 'completed', progress: 100, url: repo.url, path: 'deploy', branch: 'main', commit: repo.commit, error: null })
  t.same(session.analysis.services.map((s: { name: string }) => s.name).sort(), ['db', 'web'])
  t.ok(JSON.stringify(session.analysis.nodes).includes('LOG_LEVEL'), 'the env_file named by the compose file was read')

  const progress = stream.events.filter((e) => e.type === 'progress').map((e) => e.data)
  t.same(progress[0], { status: 'cloning', progress: 5, message: 'fetching the repository' }, 'cloning first')
  t.equal(progress.at(-1).status, 'analyzing')
  t.equal(progress.at(-1).progress, 70)
  t.same(progress.map((p: { progress: number }) => p.progress), [...progress.map((p: { progress: number }) => p.progress)].sort((a, b) => a - b), 'progress never goes back')
  t.same(stream.events.map((e) => e.type).filter((x) => x !== 'log').filter((x, i, all) => x !== all[i - 1]), ['metadata', 'progress', 'complete'], 'metadata, progress events (and log lines), complete')
  t.ok(session.logs.some((l: string) => l.includes(`fetched commit ${repo.commit.slice(0, 12)} of main`)))
})

t.test('a repository with only a Dockerfile: a workload that needs a build, the repository prefilled', async (t) => {
  const repo = await git.addRepo('api', { Dockerfile: 'FROM node:20\nCMD ["node", "index.js"]\n', 'index.js': 'console.log(1)\n' })
  const { session } = await importGit({ url: repo.url })
  t.equal(session.status, 'completed', session.error)
  t.equal(session.analysis.nodes.length, 1)
  t.match(session.analysis.nodes[0], { type: 'deployment', data: { needsBuild: true, build: { repoUrl: repo.url, context: '.' } } })
})

t.test('a missing branch: the session fails saying so', async (t) => {
  const repo = await git.addRepo('branchy', { 'compose.yaml': 'services:\n  web:\n    image: nginx\n' })
  const { stream, session } = await importGit({ url: repo.url, branch: 'release-9' })
  t.match(session, { status: 'failed', error: 'branch \'release-9\' not found in the repository', branch: 'release-9' })
  t.same(stream.events.at(-1)!, { ...stream.events.at(-1)!, type: 'failed', data: { error: session.error } })
})

t.test('a branch other than the default is fetched when asked for', async (t) => {
  await git.addRepo('multi', { 'compose.yaml': 'services:\n  web:\n    image: nginx\n' })
  const dev = await git.addRepo('multi', { 'compose.yaml': 'services:\n  api:\n    image: httpd\n' }, { branch: 'dev' })
  const { session } = await importGit({ url: dev.url, branch: 'dev' })
  t.match(session, { status: 'completed', branch: 'dev', commit: dev.commit })
  t.same(session.analysis.services.map((s: { name: string }) => s.name), ['api'])
})

t.test('over the byte limit: the transfer is cut and the session fails naming the limit', async (t) => {
  const repo = await git.addRepo('big', { 'compose.yaml': 'services: {}\n', 'blob.bin': randomBytes(MAX_BYTES * 2) })
  const { session } = await importGit({ url: repo.url })
  t.equal(session.status, 'failed')
  t.match(session.error, /larger than the import limit of .* \(IMPORT_GIT_MAX_BYTES\)/)
})

t.test('over the file-count limit: fails naming the limit', async (t) => {
  const files: Record<string, string> = { 'compose.yaml': 'services:\n  web:\n    image: nginx\n' }
  for (let i = 0; i < 60; i++) files[`docs/page-${i}.md`] = `page ${i}\n`
  const repo = await git.addRepo('many', files)
  const { session } = await importGit({ url: repo.url })
  t.match(session, { status: 'failed', error: /more than 50 files.*IMPORT_GIT_MAX_FILES/ })
})

t.test('a private repository: without a token it says so; with the token it works, and the token is nowhere afterwards', async (t) => {
  const repo = await privateGit.addRepo('secret-app', { 'compose.yaml': 'services:\n  web:\n    image: nginx\n' })
  const anonymous = await importGit({ url: repo.url })
  t.match(anonymous.session, { status: 'failed', error: /needs authentication.*give a `token`/ })
  const wrong = await importGit({ url: repo.url, token: 'not-the-token' })
  t.match(wrong.session, { status: 'failed', error: /refused the token/ })

  const ok = await importGit({ url: repo.url, token: TOKEN })
  t.equal(ok.session.status, 'completed', ok.session.error)
  t.ok(privateGit.requests.some((r) => r.authorized && r.path.includes('git-upload-pack')), 'the token opened the repository')
  const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64')
  const everything = [JSON.stringify(ok), JSON.stringify(wrong), await f.everythingStored()].join('\n')
  for (const secret of [TOKEN, basic, 'not-the-token']) t.notOk(everything.includes(secret), 'no token in the session record, replies, events or the log')
  t.notOk('token' in ok.session, 'the session has no token field')
})

t.test('a redirect to another origin does not take the token along', async (t) => {
  await privateGit.addRepo('moved-app', { 'compose.yaml': 'services:\n  web:\n    image: nginx\n' })
  const seen: string[] = []
  const mover = await httpServer((req, res) => {
    seen.push(req.headers.authorization ?? '')
    res.writeHead(301, { location: `${privateGit.url}/moved-app.git${req.url!.replace(/^\/old\.git/, '')}` })
    res.end()
  })
  const before = privateGit.requests.length
  const { session } = await importGit({ url: `${mover}/old.git`, token: TOKEN })
  t.ok(seen.length > 0 && seen.every((a) => a.startsWith('Basic ')), 'the origin it was given for received it')
  const after = privateGit.requests.slice(before)
  t.ok(after.length > 0, 'the redirect was followed')
  t.ok(after.every((r) => !r.authorized), 'the other origin never received it')
  t.match(session, { status: 'failed', error: /refused the token/ })
})

t.test('a redirect to a refused address is refused', async (t) => {
  const redirector = await httpServer((_req, res) => { res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }); res.end() })
  const { session } = await importGit({ url: `${redirector}/app.git` })
  t.match(session, { status: 'failed', error: /169\.254\.169\.254 is not allowed/ })
})

t.test('a URL that serves no Git repository: fails saying so', async (t) => {
  const page = await httpServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<html>hello</html>') })
  const { session } = await importGit({ url: `${page}/app.git` })
  t.match(session, { status: 'failed', error: /does not serve a Git repository/ })
  const missing = await importGit({ url: `${git.url}/nothing-here.git` })
  t.match(missing.session, { status: 'failed', error: /no Git repository at this URL/ })
})

t.test('a host that never answers: the fetch is aborted at its time limit', async (t) => {
  const silent = await httpServer(() => { /* never answers */ })
  const policy = new OutboundPolicy({ allowInsecure: true, allowCidrs: [] })
  const began = Date.now()
  await t.rejects(fetchRepository({ url: `${silent}/slow.git` }, { policy, limits: { maxBytes: 1e6, maxFiles: 10, maxFileBytes: 1e5, timeoutMs: 300 } }), /took longer than 300ms to fetch \(IMPORT_GIT_TIMEOUT_MS\)/)
  t.ok(Date.now() - began < 5000, 'promptly')
})

t.test('plain http is refused when insecure connections are off, before a session exists', async (t) => {
  const policy = new OutboundPolicy({ allowInsecure: false, allowCidrs: [] })
  await t.rejects(fetchRepository({ url: `${git.url}/shop.git` }, { policy, limits: { maxBytes: 1e6, maxFiles: 10, maxFileBytes: 1e5, timeoutMs: 5000 } }), /must use https/)
})
