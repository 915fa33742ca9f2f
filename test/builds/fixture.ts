// What every build test needs: the app on its own database (plain http allowed: the git server and the
// registry are on loopback), one simulated cluster that really runs build Jobs, a git server with a
// buildable repository, a registry that needs a login, an admin who registered that registry, and a user
// who owns the cluster.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { startTestDatabase } from '../helpers/database.ts'
import { startGitServer, type GitServer } from '../helpers/git-server.ts'
import { startTestRegistry, type TestRegistry } from '../helpers/test-registry.ts'
import { listen, openStream, type SseStream } from '../streams/sse-client.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import type { KubeSim } from '../kube-sim/index.ts'
import type { testConfig } from '../../src/config.ts'

const run = promisify(execFile)

interface Teardown { teardown(fn: () => unknown): void }

export const NS = 'builds'
export const DOCKERFILE = 'FROM alpine:3.20\nCOPY . /app\nRUN make\nCMD ["/app/run"]\n'

export interface BuildFixture extends TestApp {
  sim: KubeSim
  git: GitServer
  registry: TestRegistry
  registryId: string
  repo: { url: string; commit: string }
  owner: TestUser
  base: string
  call(user: TestUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object): Promise<{ status: number; body: any }>
  /** POST /builds/start as `owner` with sensible defaults; asserts nothing. */
  start(body?: Record<string, unknown>, user?: TestUser): Promise<{ status: number; body: any }>
  stream(id: string, user?: TestUser): Promise<SseStream>
  /** Waits until GET /builds/:id satisfies `pred`. */
  until(id: string, pred: (b: any) => boolean, what?: string): Promise<any>
  kubectlJson<T = any>(...args: string[]): Promise<T>
  /** Whether `kind/name` exists in the build namespace. */
  exists(kind: string, name: string): Promise<boolean>
  /** Every build document, the workflows and the app's log, as one string to search for secrets. */
  everythingStored(): Promise<string>
}

export async function buildFixture(t: Teardown, config: Parameters<typeof testConfig>[0] = {}, registryAuth: 'basic' | 'bearer' = 'basic'): Promise<BuildFixture> {
  const sim = await startTestCluster(t)
  const git = await startGitServer()
  const registry = await startTestRegistry({ auth: registryAuth })
  t.teardown(async () => { await git.close(); await registry.close() })
  const testApp = await startTestApp(t, { ALLOW_INSECURE_CLUSTERS: true, ...config })
  const { app } = testApp
  const admin = await registerUser(app, { role: 'admin' })
  const owner = await registerUser(app, { role: 'user' })
  const call: BuildFixture['call'] = async (user, method, url, payload) => {
    const res = await app.inject({ method, url, headers: user.headers, ...(payload && { payload }) })
    return { status: res.statusCode, body: res.body ? res.json() : undefined }
  }
  const reg = await call(admin, 'POST', '/v1/api/admin/registries', { name: 'loopback', registry_type: 'custom', url: registry.url, username: registry.username, password: registry.password })
  if (reg.status !== 201) throw new Error(`registry: ${reg.status} ${JSON.stringify(reg.body)}`)
  const cluster = await call(owner, 'POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))
  if (cluster.status !== 201) throw new Error(`cluster: ${cluster.status} ${JSON.stringify(cluster.body)}`)
  const kubeconfig = sim.kubeconfigPath()
  const kubectl = async (...args: string[]) => (await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 })).stdout
  await kubectl('create', 'namespace', NS)
  const repo = await git.addRepo('app', { Dockerfile: DOCKERFILE, 'run.sh': '#!/bin/sh\necho hi\n', 'web/Dockerfile.web': 'FROM nginx:1.27\nCOPY web/site /usr/share/nginx/html\n', 'web/site/index.html': '<h1>hi</h1>\n' })
  const base = await listen(app)
  return {
    ...testApp, sim, git, registry, registryId: reg.body.id, repo, owner, base, call,
    start: (body = {}, user = owner) => call(user, 'POST', '/v1/api/builds/start', { repo_url: repo.url, registry_id: reg.body.id, image_name: 'team/app', image_tag: 'v1', cluster: 'sim', namespace: NS, ...body }),
    stream: (id, user = owner) => openStream(base, `/v1/api/builds/${id}/stream`, { authorization: `Bearer ${user.token}` }),
    until: (id, pred, what = 'the build') => waitFor(what, async () => {
      const r = await call(owner, 'GET', `/v1/api/builds/${id}`)
      return pred(r.body) && r.body
    }, 20_000, 20),
    kubectlJson: async (...args) => JSON.parse(await kubectl(...args, '-o', 'json')),
    exists: async (kind, name) => {
      const out = await kubectl('-n', NS, 'get', kind, name, '--ignore-not-found', '-o', 'name')
      return out.trim() !== ''
    },
    async everythingStored() {
      const parts: string[] = []
      for (const name of ['builds', 'workflows']) parts.push(JSON.stringify(await app.db.collection(name).find({}).toArray()))
      return `${parts.join('\n')}\n${testApp.logs.join('')}`
    },
  }
}

export const terminal = (events: Array<{ type: string }>) => events.some((e) => ['complete', 'failed', 'cancelled'].includes(e.type))

/**
 * What the tests of builds outliving their process need, without an app (each test starts its own
 * processes on the database): a simulated cluster with the build namespace, the database, a git server with
 * a buildable repository, a registry that needs a login, and kubectl on the cluster.
 */
export async function startBuildWorld(t: Teardown) {
  const sim = await startTestCluster(t)
  const db = await startTestDatabase(t)
  const git = await startGitServer()
  const registry = await startTestRegistry({ auth: 'bearer' })
  t.teardown(async () => { await git.close(); await registry.close() })
  const kubeconfig = sim.kubeconfigPath()
  const kubectl = async (...args: string[]) => (await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 })).stdout
  await kubectl('create', 'namespace', NS)
  const repo = await git.addRepo('app', { Dockerfile: DOCKERFILE, 'run.sh': 'echo hi\n' })
  return { sim, db, git, registry, kubectl, repo }
}
