// kube-sim: an in-process Kubernetes API server for tests. See README.md for what it covers.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { admitService } from './allocators.ts'
import { ObjectApi } from './api.ts'
import { Authenticator, type OidcOptions, type UserInfo } from './auth.ts'
import { bootstrap } from './bootstrap.ts'
import { CrdController } from './controllers/crd.ts'
import { CronJobController } from './controllers/cronjob.ts'
import { DaemonSetController } from './controllers/daemonset.ts'
import { HpaController } from './controllers/hpa.ts'
import { JobController } from './controllers/job.ts'
import { EndpointsController, LoadBalancerController } from './controllers/networking.ts'
import { PdbController } from './controllers/pdb.ts'
import { StatefulSetController } from './controllers/statefulset.ts'
import { VolumeController } from './controllers/volume.ts'
import { DeploymentController } from './controllers/deployment.ts'
import { GarbageCollector } from './controllers/gc.ts'
import { Kubelet } from './controllers/kubelet.ts'
import { ControllerManager, defaultTiming, type ControllerContext, type Timing } from './controllers/manager.ts'
import { NamespaceController } from './controllers/namespace.ts'
import { ReplicaSetController } from './controllers/replicaset.ts'
import { EventRecorder } from './events.ts'
import { ExecService } from './exec.ts'
import { Faults, type FailOptions, type RequestHold } from './faults.ts'
import { ImagePolicy } from './images.ts'
import { kubeconfigYaml, type KubeconfigUser } from './kubeconfig.ts'
import { LogService } from './logs.ts'
import { MetricsService } from './metrics.ts'
import { openapi } from './openapi.ts'
import { createPki } from './pki.ts'
import { Registry } from './registry.ts'
import { RestHandler } from './rest.ts'
import { SimServer } from './server.ts'
import { Store } from './store.ts'
import { WatchHub } from './watch.ts'
import { ProcessRuntime } from './processes/pod-runner.ts'
import type { BuildHold, BuildPhase } from './processes/failing-builds.ts'

export type { Timing } from './controllers/manager.ts'
export type { OidcOptions, UserInfo } from './auth.ts'
export type { FailOptions, RequestHold } from './faults.ts'
export type { ImageBehaviour } from './images.ts'
export type { BuildHold, BuildPhase, HeldBuild } from './processes/failing-builds.ts'
export { logLine, logsAnnotation } from './logs.ts'
export { cpuAnnotation, memoryAnnotation } from './metrics.ts'
export { utilizationAnnotation } from './controllers/hpa.ts'

export interface KubeSimOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number
  /** Interface to bind; default 127.0.0.1. */
  host?: string
  /** Number of Ready nodes; default 2. */
  nodes?: number
  /** Simulated durations (pod start, readiness, job runtime, ...). Defaults are tens of ms. */
  timing?: Partial<Timing>
  /** Accept ID tokens from this OIDC issuer (signature checked against its JWKS). */
  oidc?: OidcOptions
  /** Events kept for watch resumption; a watch from an older resourceVersion gets 410 Gone. Default 10000. */
  watchHistory?: number
  /** Interval between BOOKMARK events on watches that allow them. Default 5000 ms. */
  bookmarkIntervalMs?: number
  /** Containers of this image (a repository matches every tag) run the machine's `git`. Default `alpine/git`. */
  gitImage?: string
  /** Containers of this image run the simulated `buildctl-daemonless.sh build`. Default `moby/buildkit`. */
  builderImage?: string
}

export type Identity = 'token' | 'cert' | 'serviceaccount'

export interface KubeSim {
  /** https://HOST:PORT */
  url: string
  /** PEM of the CA that signed the serving and client certificates. */
  caPem: string
  identities: {
    admin: { token: string; username: string }
    serviceAccount: { token: string; namespace: string; name: string; username: string }
    clientCert: { certPem: string; keyPem: string; username: string }
  }
  /** Writes a kubeconfig for an identity (default 'token') to a temp file and returns its path. */
  kubeconfigPath(identity?: Identity | { token: string }): string
  kubeconfigYaml(identity?: Identity | { token: string }): string
  /** Issues a client certificate for any user and groups, signed by the CA. */
  issueClientCert(user: string, groups?: string[]): Promise<{ certPem: string; keyPem: string }>
  /** Adds a static bearer token. */
  addToken(token: string, user: UserInfo): void
  faults: {
    /** Ends every open watch (clients see the stream close). */
    dropWatches(): void
    /** The next n API requests (optionally only matching a path prefix / method) fail with `status`. */
    failNext(n: number, status: number, opts?: FailOptions): void
    /** Delay before every request is handled. */
    setLatency(ms: number): void
    /** Holds matching API requests before they are handled until released (reset releases them too). */
    hold(opts: FailOptions): RequestHold
    /** Forgets watch history: resuming from any earlier resourceVersion yields 410 Gone. */
    compactHistory(): void
    /** Stops the listener and severs all connections; state is kept. */
    stop(): Promise<void>
    /** Listens again on the same port. */
    restart(): Promise<void>
    /** Clears pending failures and latency. */
    reset(): void
  }
  failingImages: {
    imagePullBackOff(image: string): void
    crashLoop(image: string): void
    neverReady(image: string): void
    /** Job-style failure: the container exits 1 after running. */
    exitFailure(image: string): void
    clear(image: string): void
  }
  /** Controls over image builds, by the image being built (`--output name=`; tag and registry host optional). */
  failingBuilds: {
    /** Builds of this image fail at the phase: a RUN step exits 2 (`build`) or the push fails (`push`). */
    at(image: string, phase: 'build' | 'push'): void
    /** Holds builds of this image on entering the phase until `release()`; `reached` resolves when one is held. */
    hold(image: string, phase: BuildPhase): BuildHold
    /** Every phase of this image's builds lasts at least `ms` longer. */
    slow(image: string, ms: number): void
    /** Forgets the marks of one image, or every mark and hold. */
    clear(image?: string): void
  }
  /** Number of watches currently open (handy to await a client's watch being established). */
  openWatches(): number
  /** HTTP requests received since start (WebSocket upgrades excluded). */
  requestCount(): number
  close(): Promise<void>
}

const version = {
  major: '1', minor: '32', gitVersion: 'v1.32.0-kube-sim', gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean',
  buildDate: '2025-01-01T00:00:00Z', goVersion: 'go1.23.4', compiler: 'gc', platform: 'linux/amd64',
}

export async function startKubeSim(opts: KubeSimOptions = {}): Promise<KubeSim> {
  const host = opts.host ?? '127.0.0.1'
  const timing: Timing = { ...defaultTiming, ...(opts.timing ?? {}) }
  const pki = await createPki([...new Set([host, '127.0.0.1', 'localhost', '::1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', '10.96.0.1'])])
  const store = new Store(opts.watchHistory ?? 10_000)
  const registry = new Registry()
  const api = new ObjectApi(store, registry)
  api.admit = (rt, obj, old) => admitService(store, rt, obj, old)
  // Discovery must reflect a CRD as soon as its create returns, so the registry follows the store synchronously.
  store.subscribe((e) => { if (e.key === 'apiextensions.k8s.io/customresourcedefinitions') registry.setCrds(store.list(e.key)) })

  const authn = new Authenticator({ oidc: opts.oidc, serviceAccountUid: (ns, name) => store.get('/serviceaccounts', ns, name)?.metadata.uid })
  await authn.init()
  const images = new ImagePolicy()
  const events = new EventRecorder(api, registry)
  const manager = new ControllerManager(store)
  const ctx: ControllerContext = {
    api, store, registry, timing, images, events,
    nodes: () => store.list('/nodes'),
    rt: (g, p) => registry.byGroupPlural(g, p)!,
    after: (c, key, ms) => manager.after(c, key, ms),
    enqueue: (c, key) => manager.enqueue(c, key),
  }
  const processes = new ProcessRuntime(
    { gitImage: opts.gitImage ?? 'alpine/git', builderImage: opts.builderImage ?? 'moby/buildkit' },
    (ns) => ({ configMap: (n) => store.get('/configmaps', ns, n), secret: (n) => store.get('/secrets', ns, n) }),
    timing,
  )
  const kubelet = new Kubelet(ctx, processes)
  for (const c of [
    kubelet, new ReplicaSetController(ctx), new DeploymentController(ctx), new StatefulSetController(ctx), new DaemonSetController(ctx),
    new JobController(ctx), new CronJobController(ctx), new VolumeController(ctx), new EndpointsController(ctx), new LoadBalancerController(ctx),
    new HpaController(ctx), new PdbController(ctx), new GarbageCollector(ctx), new NamespaceController(ctx, pki.ca.certPem), new CrdController(ctx),
  ]) manager.add(c)

  const watches = new WatchHub(api, opts.bookmarkIntervalMs ?? 5000)
  const logs = new LogService(api, kubelet, timing.logIntervalMs)
  const metrics = new MetricsService(api, registry)
  const exec = new ExecService(api, registry, kubelet, pki.ca.certPem)
  const faults = new Faults()
  let server: SimServer
  const rest = new RestHandler(api, registry, watches, authn, {
    logs: (req, res, t, q) => logs.serve(req, res, t, q),
    metrics: (t, q) => metrics.handle(t, q),
    openapi: (path) => openapi(registry, path),
  }, () => `${host}:${server.port}`)
  server = new SimServer({
    host, port: opts.port ?? 0, tls: { key: pki.server.keyPem, cert: pki.server.certPem, ca: pki.ca.certPem }, authn, faults, rest, version,
    upgrade: (req, socket, head) => exec.upgrade(req, socket, head),
    watches: () => watches.list(),
    onStop: () => { watches.dropAll(); logs.closeAll(); exec.closeAll() },
  })
  await server.start()
  const port = server.port

  bootstrap(api, registry, { nodes: opts.nodes ?? 2, host, port: () => port })
  const saRt = registry.byGroupPlural('', 'serviceaccounts')!
  const sa = api.create(saRt, 'default', { metadata: { name: 'kube-sim-deployer' } }, { fieldManager: 'kube-sim' })
  manager.start()

  const adminToken = randomBytes(24).toString('hex')
  const admin: UserInfo = { username: 'kube-sim-admin', uid: 'kube-sim-admin', groups: ['system:masters', 'system:authenticated'] }
  authn.addStaticToken(adminToken, admin)
  const saToken = (await authn.issueServiceAccountToken('default', 'kube-sim-deployer', sa.metadata.uid!, 365 * 24 * 3600)).token
  const cert = await pki.issueClientCert('kube-sim-cert-admin', ['system:masters'])

  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`
  const tmp = mkdtempSync(join(tmpdir(), 'kube-sim-'))
  let n = 0
  const userFor = (identity: Identity | { token: string }): { user: KubeconfigUser; name: string; namespace?: string } => {
    if (typeof identity === 'object') return { user: { token: identity.token }, name: 'custom' }
    if (identity === 'cert') return { user: { certPem: cert.certPem, keyPem: cert.keyPem }, name: 'kube-sim-cert-admin' }
    if (identity === 'serviceaccount') return { user: { token: saToken }, name: 'kube-sim-deployer', namespace: 'default' }
    return { user: { token: adminToken }, name: 'kube-sim-admin' }
  }
  const yamlFor = (identity: Identity | { token: string } = 'token') => {
    const u = userFor(identity)
    return kubeconfigYaml({ server: url, caPem: pki.ca.certPem, user: u.user, userName: u.name, namespace: u.namespace })
  }
  let closed = false

  return {
    url,
    caPem: pki.ca.certPem,
    identities: {
      admin: { token: adminToken, username: admin.username },
      serviceAccount: { token: saToken, namespace: 'default', name: 'kube-sim-deployer', username: 'system:serviceaccount:default:kube-sim-deployer' },
      clientCert: { certPem: cert.certPem, keyPem: cert.keyPem, username: 'kube-sim-cert-admin' },
    },
    kubeconfigYaml: yamlFor,
    kubeconfigPath(identity = 'token') {
      const p = join(tmp, `kubeconfig-${typeof identity === 'object' ? 'custom' : identity}-${++n}.yaml`)
      writeFileSync(p, yamlFor(identity), { mode: 0o600 })
      return p
    },
    issueClientCert: (user, groups = []) => pki.issueClientCert(user, groups),
    addToken: (token, user) => authn.addStaticToken(token, user),
    faults: {
      dropWatches: () => watches.dropAll(),
      failNext: (count, status, o) => faults.failNext(count, status, o),
      setLatency: (ms) => { faults.latencyMs = ms },
      hold: (o) => faults.hold(o),
      compactHistory: () => store.compact(),
      stop: () => server.stop(),
      restart: async () => { if (!server.listening) await server.start() },
      reset: () => faults.clear(),
    },
    failingImages: {
      imagePullBackOff: (i) => images.mark(i, 'pull-failure'),
      crashLoop: (i) => images.mark(i, 'crash-loop'),
      neverReady: (i) => images.mark(i, 'never-ready'),
      exitFailure: (i) => images.mark(i, 'exit-failure'),
      clear: (i) => images.unmark(i),
    },
    failingBuilds: {
      at: (i, phase) => processes.builds.at(i, phase),
      hold: (i, phase) => processes.builds.hold(i, phase),
      slow: (i, ms) => processes.builds.slow(i, ms),
      clear: (i) => processes.builds.clear(i),
    },
    openWatches: () => watches.count,
    requestCount: () => server.requests,
    async close() {
      if (closed) return
      closed = true
      manager.close()
      processes.builds.clear()
      await kubelet.close()
      await server.stop()
      exec.close()
      rmSync(tmp, { recursive: true, force: true })
    },
  }
}
