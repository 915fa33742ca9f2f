// The composition root of the domain: repositories on the app's database, services on the repositories
// and the bus. Routes reach services only through `app.services`. Background work (statistics repair,
// cluster health checks) starts here and stops on close, before the database plugin closes the client.
import fp from 'fastify-plugin'
import { WorkflowRepository } from '../src/repositories/workflows.ts'
import { VersionRepository } from '../src/repositories/versions.ts'
import { RunRepository } from '../src/repositories/runs.ts'
import { StatsRepository } from '../src/repositories/stats.ts'
import { ClusterRepository } from '../src/repositories/clusters.ts'
import { ClusterLogRepository } from '../src/repositories/cluster-logs.ts'
import { RegistryRepository } from '../src/repositories/registries.ts'
import { ResourceRepository } from '../src/repositories/resources.ts'
import { WorkflowService } from '../src/services/workflow-service.ts'
import { StatsService } from '../src/services/stats-service.ts'
import { ScheduleClaims } from '../src/replicas/schedule-claims.ts'
import { SearchService } from '../src/services/search-service.ts'
import { ClusterService } from '../src/services/cluster-service.ts'
import { ResourceService } from '../src/services/resource-service.ts'
import { ResourceWatchService } from '../src/services/resource-watch-service.ts'
import { ClusterHealthMonitor } from '../src/services/cluster-health.ts'
import { LeasedOwnership, SingleOwnership, type ClusterOwnership } from '../src/kube/cluster-ownership.ts'
import { LeaseRepository } from '../src/replicas/leases.ts'
import { MetricsService } from '../src/services/metrics/index.ts'
import { RegistryService } from '../src/services/registry-service.ts'
import { PluginRepository } from '../src/repositories/plugins.ts'
import { CrdPluginService } from '../src/services/crd-plugin-service.ts'
import { ManifestService } from '../src/services/manifest-service.ts'
import { DiagnosticsService } from '../src/services/diagnostics/index.ts'
import { BUILTIN_PLUGINS } from '../src/services/plugin-catalogue/index.ts'
import { builtInTemplates } from '../src/services/node-catalogue.ts'
import { Sealer } from '../src/crypto/sealer.ts'
import { loadKeyRing } from '../src/crypto/keyring.ts'
import { outboundPolicyFor, type OutboundPolicy } from '../src/net/outbound-policy.ts'
import { OidcTokenSource } from '../src/kube/oidc-token.ts'
import { k8s } from '../src/kube/client.ts'
import { RunService, type ApplyEngine } from '../src/services/run-service.ts'
import { BuildRepository } from '../src/repositories/builds.ts'
import { BuildService } from '../src/services/build-service.ts'
import { ImportSessionRepository } from '../src/repositories/import-sessions.ts'
import { ImportService } from '../src/services/import-service.ts'
import { WorkerPool } from '../src/workers/pool.ts'
import { GraphRenderer } from '../src/workers/render.ts'
import { NotificationRepository } from '../src/repositories/notifications.ts'
import { NotificationService } from '../src/services/notifications/index.ts'
import { DriftService } from '../src/services/lifecycle/drift/drift-service.ts'
import { RollbackService } from '../src/services/lifecycle/rollback.ts'
import { Digester } from '../src/services/lifecycle/drift/digest.ts'
import { DriftBaselineRepository } from '../src/repositories/drift-baselines.ts'
import { DriftStateRepository } from '../src/repositories/drift-states.ts'
import { resourceReader } from '../src/kube/resource-reader.ts'
import { NotificationChannelService } from '../src/services/notifications/channels/index.ts'
import { NotificationChannelRepository } from '../src/repositories/notification-channels.ts'
import { NotificationDeliveryRepository } from '../src/repositories/notification-deliveries.ts'

/** Workflows kept by the read cache: ~5 KB for a 12-node canvas and ~3 KB of its serialized reply, so ~8 MB at most. */
const WORKFLOW_CACHE_ENTRIES = 1000

export interface Services {
  workflows: WorkflowService
  stats: StatsService
  search: SearchService
  clusters: ClusterService
  clusterHealth: ClusterHealthMonitor
  metrics: MetricsService
  registries: RegistryService
  plugins: CrdPluginService
  manifests: ManifestService
  runs: RunService
  resources: ResourceService
  resourceWatch: ResourceWatchService
  diagnostics: DiagnosticsService
  builds: BuildService
  imports: ImportService
  notifications: NotificationService
  drift: DriftService
  rollbacks: RollbackService
  notificationChannels: NotificationChannelService
}

declare module 'fastify' {
  interface FastifyInstance { services: Services; sealer: Sealer; outboundPolicy: OutboundPolicy }
}

export default fp(async (app) => {
  const { db, bus, config } = app
  const keyRing = await loadKeyRing(config, app.log)
  const sealer = new Sealer(keyRing)
  const outboundPolicy = outboundPolicyFor(config)
  app.log.info(outboundPolicy.describe())
  const clusterRepo = new ClusterRepository(db)
  const clusters = new ClusterService({
    clusters: clusterRepo, logs: new ClusterLogRepository(db), sealer, policy: outboundPolicy, oidc: new OidcTokenSource(outboundPolicy), bus,
    findUserIdByEmail: async (email) => (await app.usersRepository.findByEmail(email))?._id.toHexString() ?? null,
    describeUser: async (id) => { const u = await app.usersRepository.findById(id); return u && { email: u.email, name: u.name } },
    timeoutMs: config.CLUSTER_TIMEOUT_MS,
  })
  const registries = new RegistryService({ registries: new RegistryRepository(db), sealer, policy: outboundPolicy })
  const pluginRepo = new PluginRepository(db)
  const plugins = new CrdPluginService(pluginRepo)
  // Built-in plugins are loaded before the first request, disabled until an admin enables each.
  const catalogue = await plugins.loadCatalogue(BUILTIN_PLUGINS)
  app.log.info({ inserted: catalogue.inserted.length, refreshed: catalogue.refreshed.length }, 'plugin catalogue loaded')
  if (catalogue.rejected.length) app.log.error({ rejected: catalogue.rejected }, 'built-in plugins failed their checks and were not loaded')
  // The read cache is exact only while this process is the database's sole client: the embedded server.
  // A real MongoDB may have other writers (replicas of this service), which would never invalidate it.
  const workflowRepo = new WorkflowRepository(db, undefined, config.MONGODB_URI ? {} : { cache: { maxEntries: WORKFLOW_CACHE_ENTRIES } })
  const versionRepo = new VersionRepository(db)
  const runRepo = new RunRepository(db)
  const workflows = new WorkflowService({
    workflows: workflowRepo, versions: versionRepo, runs: runRepo, bus,
    canDeployTo: (userId, ref) => clusters.canReach(userId, ref, 'deployer'),
    pluginsByRef: async (refs) => (await pluginRepo.findByRefs(refs)).map((d) => ({ id: d._id, name: d.name, config_fields: d.config_fields })),
  })
  const resourceRepo = new ResourceRepository(db)
  const resources = new ResourceService({
    resources: resourceRepo, bus, timeoutMs: config.CLUSTER_TIMEOUT_MS,
    kubeConfigFor: async (userId, ref, need) => { const { kc, cluster } = await clusters.kubeConfigFor(userId, ref, need); return { kc, cluster: { id: cluster.id, name: cluster.name } } },
    reachableClusters: async (userId) => (await clusterRepo.search(userId, {}, 1000)).map((c) => ({ id: c._id, name: c.name })),
    workflowIdsOf: (userId) => workflowRepo.idsOf(userId),
  })
  // The apply engine loads client-node, so it is imported on the first run, not at start-up.
  const engine: ApplyEngine = {
    deploy: async (...args) => (await import('../src/kube/deploy.ts')).deploy(...args),
    removeWorkflowObjects: async (...args) => (await import('../src/kube/deploy.ts')).removeWorkflowObjects(...args),
  }
  // Compose analyses and large renders run on these threads, never on the event loop (issue 22).
  const pool = new WorkerPool({
    size: config.WORKER_POOL_SIZE, timeoutMs: config.WORKER_JOB_TIMEOUT_MS,
    onThreadError: (err) => app.log.error({ err: { message: String((err as Error)?.message) } }, 'a worker thread failed'),
  })
  const renderer = new GraphRenderer(pool)
  const clusterLogs = new ClusterLogRepository(db)
  // Which clusters this replica watches and health-checks: all of them alone, its leases' among replicas (API.md §11).
  const ownership: ClusterOwnership = app.replica.shared
    ? new LeasedOwnership({
      leases: new LeaseRepository(db), replicaId: app.replica.id, ttlMs: config.LEASE_TTL_MS, log: app.log,
      clusterIds: async () => { const ids: string[] = []; for await (const c of clusterRepo.all()) ids.push(c._id); return ids },
      onReleased: () => bus.emit('leases.released', { replica_id: app.replica.id }),
    })
    : new SingleOwnership()
  // Another replica shut down and handed its leases back: take a share of them now.
  app.remoteBus.on('leases.released', () => ownership.poke())
  // A cluster registered or deleted (here or on another replica): its lease is taken or dropped now, not at the next renewal.
  bus.on('cluster.changed', () => ownership.poke())
  app.remoteBus.on('cluster.changed', () => ownership.poke())
  // Drift detection reads the watchers and the watchers tell it what they see: built after them, reached lazily.
  let drift: DriftService | undefined
  const resourceWatch = new ResourceWatchService({
    resources: resourceRepo, workflows: workflowRepo, bus, remoteBus: app.remoteBus, ownership, log: app.log,
    // Records of a workflow never run here (or archived) are not followed.
    activeWorkflowIds: (ownerId) => workflowRepo.deployedIds(ownerId),
    kubeConfigFor: async (ownerId, clusterId) => (await clusters.kubeConfigFor(ownerId, clusterId, 'viewer')).kc,
    // A watch reconnect is news about the connection, as a health check is.
    clusterLog: (clusterId, success, message) => clusterLogs.add(clusterId, 'watch', success, message),
    backoff: { baseMs: config.WATCH_BACKOFF_BASE_MS, maxMs: config.WATCH_BACKOFF_MAX_MS }, probeIntervalMs: config.WATCH_PROBE_INTERVAL_MS,
    requestTimeoutMs: config.CLUSTER_TIMEOUT_MS,
    drift: { observed: (ref, object) => drift?.observed(ref, object), overlay: (o, w, n, status) => (drift ? drift.overlay(o, w, n, status) : status) },
  })
  drift = new DriftService({
    baselines: new DriftBaselineRepository(db), states: new DriftStateRepository(db), workflows: workflowRepo, bus, remoteBus: app.remoteBus, ownership,
    hasher: new Digester(keyRing),
    reader: async (ownerId, clusterId) => resourceReader((await clusters.kubeConfigFor(ownerId, clusterId, 'viewer')).kc, config.CLUSTER_TIMEOUT_MS),
    derivedStatus: (ownerId, workflowId, nodeId) => resourceWatch.derivedNodeStatus(ownerId, workflowId, nodeId),
    sync: (ownerId, workflowId, clusterId) => runs.sync(ownerId, workflowId, { cluster: clusterId }, 'auto_sync'),
    runTrigger: async (ownerId, workflowId, runId) => (await runRepo.get(ownerId, workflowId, runId))?.trigger ?? null,
    removeLabels: async (ownerId, clusterId, ref, keys) => (await import('../src/kube/label-removal.ts')).removeLabels((await clusters.kubeConfigFor(ownerId, clusterId, 'deployer')).kc, ref, keys, config.CLUSTER_TIMEOUT_MS),
    intervalMs: config.DRIFT_CHECK_INTERVAL_S * 1000, concurrency: config.CLUSTER_HEALTH_CONCURRENCY, log: app.log,
  })
  const runs = new RunService({
    workflows: workflowRepo, workflowService: workflows, versions: versionRepo, runs: runRepo, clusters,
    plugin: (id) => plugins.getForRender(id), engine, resources, render: (graph, ctx) => renderer.render(graph, ctx),
    live: resourceWatch, bus, log: app.log, applied: drift,
    clusterConcurrency: config.RUN_CLUSTER_CONCURRENCY, readyTimeoutMs: config.RUN_READY_TIMEOUT_MS, heartbeatMs: config.RUN_HEARTBEAT_MS, requestTimeoutMs: config.CLUSTER_TIMEOUT_MS,
    shared: app.replica.shared,
  })
  const notificationRepo = new NotificationRepository(db)
  const services: Services = {
    workflows,
    stats: new StatsService(new StatsRepository(db), bus),
    search: new SearchService(db, builtInTemplates, clusterRepo, registries, plugins, resourceRepo),
    clusters,
    clusterHealth: new ClusterHealthMonitor(clusters, config.CLUSTER_HEALTH_CONCURRENCY, (clusterId) => ownership.owns(clusterId)),
    metrics: new MetricsService({
      clustersOf: (userId) => clusterRepo.search(userId, {}, 1000),
      connect: async (userId, clusterId) => (await clusters.kubeConfigFor(userId, clusterId, 'viewer')).kc,
      resourceCounts: (userId) => resourceRepo.countByClusterAndStatus(userId),
      timeoutMs: config.CLUSTER_TIMEOUT_MS, cacheMs: config.METRICS_CACHE_MS, concurrency: config.CLUSTER_HEALTH_CONCURRENCY,
      onClustersChanged: (listener) => { bus.on('cluster.changed', listener) },
    }),
    registries,
    plugins,
    manifests: new ManifestService({ workflows, plugin: (id) => plugins.getForRender(id), renderer }),
    runs,
    resources,
    resourceWatch,
    drift,
    rollbacks: new RollbackService({ workflows, runs }),
    builds: new BuildService({
      builds: new BuildRepository(db), clusters, registries, workflows, policy: outboundPolicy, bus, log: app.log,
      // The hub is decorated by the streams plugin, after this one; a build publishes only once serving.
      hub: () => app.streams,
      config: {
        gitImage: config.BUILD_GIT_IMAGE, builderImage: config.BUILD_BUILDER_IMAGE, timeoutMs: config.BUILD_TIMEOUT_MS,
        ttlSecondsAfterFinished: config.BUILD_TTL_AFTER_FINISHED_S, cpuRequest: config.BUILD_CPU_REQUEST, cpuLimit: config.BUILD_CPU_LIMIT,
        memoryRequest: config.BUILD_MEMORY_REQUEST, memoryLimit: config.BUILD_MEMORY_LIMIT, logMaxLines: config.BUILD_LOG_MAX_LINES, logMaxBytes: config.BUILD_LOG_MAX_BYTES,
        maxLineBytes: config.LOG_LINE_MAX_BYTES, heartbeatMs: config.RUN_HEARTBEAT_MS, requestTimeoutMs: config.CLUSTER_TIMEOUT_MS,
        backoff: { baseMs: config.WATCH_BACKOFF_BASE_MS, maxMs: config.WATCH_BACKOFF_MAX_MS }, probeIntervalMs: config.WATCH_PROBE_INTERVAL_MS,
      },
    }),
    diagnostics: new DiagnosticsService({ workflows, runs: runRepo, clusters, plugin: (id) => plugins.getForRender(id), timeoutMs: config.CLUSTER_TIMEOUT_MS, renderer }),
    imports: new ImportService({
      sessions: new ImportSessionRepository(db), workflows, policy: outboundPolicy, log: app.log,
      // The hub is decorated by the streams plugin, after this one; imports publish only once serving.
      publish: (key, type, data) => app.streams.publish(key, type, data), bus,
      gitLimits: { maxBytes: config.IMPORT_GIT_MAX_BYTES, maxFiles: config.IMPORT_GIT_MAX_FILES, maxFileBytes: config.IMPORT_GIT_MAX_FILE_BYTES, timeoutMs: config.IMPORT_GIT_TIMEOUT_MS },
      ttlMs: config.IMPORT_SESSION_TTL_S * 1000, heartbeatMs: config.RUN_HEARTBEAT_MS, concurrency: config.IMPORT_CONCURRENCY, pool,
    }),
    // Listens from here on, so runs, builds and imports that recovery fails below are notified too.
    notifications: new NotificationService({
      notifications: notificationRepo, bus, log: app.log,
      // The hub is decorated by the streams plugin, after this one.
      hub: () => app.streams,
      run: async (ownerId, workflowId, runId) => {
        const run = await runRepo.get(ownerId, workflowId, runId)
        if (!run) return null
        const workflow = await workflowRepo.get(ownerId, workflowId).catch(() => null)
        return { dry_run: run.dry_run, error: run.error, workflow_name: workflow?.name ?? null }
      },
      workflowName: async (ownerId, workflowId) => (await workflowRepo.get(ownerId, workflowId).catch(() => null))?.name ?? null,
    }),
    // Listens to notification.created from here on; its worker sends once serving (onReady below).
    notificationChannels: new NotificationChannelService({
      channels: new NotificationChannelRepository(db),
      deliveries: new NotificationDeliveryRepository(db, config.WEBHOOK_DELIVERY_RETENTION_DAYS * 86_400_000),
      notification: (ownerId, id) => notificationRepo.get(ownerId, id),
      bus, sealer, policy: outboundPolicy, log: app.log,
      config: {
        timeoutMs: config.WEBHOOK_TIMEOUT_MS, retryBaseMs: config.WEBHOOK_RETRY_BASE_MS, maxChannels: config.WEBHOOK_CHANNELS_PER_USER,
        pollMs: config.WEBHOOK_POLL_MS, publicUrl: config.PUBLIC_URL,
      },
    }),
  }
  // Runs a dead process left running are failed as interrupted before any request can start a new one.
  await services.runs.recover()
  // Builds left running are re-attached to their Jobs (which kept going in their clusters).
  await services.builds.recover()
  await services.imports.recover()
  app.decorate('sealer', sealer)
  app.decorate('outboundPolicy', outboundPolicy)
  app.decorate('services', services)
  // Load the Kubernetes client in the background once serving, so the first cluster call does not wait.
  app.addHook('onReady', async () => { void k8s().catch(() => undefined) })
  // The worker pool's library, loaded now rather than on the first import (it held the event loop then).
  app.addHook('onReady', async () => { await pool.prepare() })
  // Watchers of every deployed, non-archived workflow resume once serving (their clusters are contacted in the
  // background), on the clusters whose leases this replica took first.
  app.addHook('onReady', async () => { await ownership.start(); await services.drift.start(); await services.resourceWatch.start() })
  // Webhook deliveries left pending (a restart, another replica's) are sent from now on.
  app.addHook('onReady', async () => { services.notificationChannels.start() })
  // Replicas sharing the database repair the statistics once per slot between them.
  services.stats.start(config.STATS_REFRESH_CRON, app.replica.shared ? new ScheduleClaims(db, app.replica.id) : undefined)
  services.clusterHealth.start(config.CLUSTER_HEALTH_CRON)
  // Before anything else stops: the leases go back first, so another replica takes the clusters at once.
  // Then, before the server waits for open requests: a reply waiting on a run answers 202 now.
  // Then runs and imports in flight finish or are interrupted while the streams are still open: this hook
  // runs before the streams plugin's preClose, which publishes what they announced last (a run's
  // `complete`) to the streams and the event log before ending them (API.md §14).
  app.addHook('preClose', async () => {
    await ownership.release()
    services.runs.stopAccepting()
    // Runs in flight get most of the grace period (the process is killed at SHUTDOWN_GRACE_MS).
    await Promise.all([services.runs.close(Math.floor(config.SHUTDOWN_GRACE_MS * 0.8)), services.imports.close(Math.floor(config.SHUTDOWN_GRACE_MS * 0.5))])
  })
  app.addHook('onClose', async () => {
    await Promise.all([services.stats.stop(), services.clusterHealth.stop(), services.resourceWatch.close(), services.drift.close(), services.builds.close(), ownership.stop()])
    // Last: what the work above announced while stopping is still recorded.
    await services.notifications.close()
    // After the notifications: what they stored while stopping is queued (and sent by whichever replica runs next).
    await services.notificationChannels.close()
    // After the imports and runs: a job still on a thread at this point is given up.
    await pool.close()
  })
}, { name: 'services', dependencies: ['database', 'events', 'auth'] })
