// The typed environment. Every variable the service reads is declared here, with its default, and checked
// once at start-up so a bad value stops the process with one line naming the variable.
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { authConfigProblem } from './services/auth-config.ts'
import { parseKey } from './crypto/sealer.ts'

const Bool = (fallback: boolean, description: string) => Type.Boolean({ default: fallback, description })

export const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development', description: 'development, production or test',
  }),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1, description: 'interface to listen on' }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535, description: 'port to listen on' }),
  LOG_LEVEL: Type.Union([Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')], {
    default: 'info', description: 'pino log level',
  }),
  MONGODB_URI: Type.Optional(Type.String({ minLength: 1, pattern: '^mongodb(\\+srv)?://', description: 'a real MongoDB; unset = embedded server' })),
  MONGODB_DB: Type.String({ default: 'cluster_workflows', pattern: '^[A-Za-z0-9_-]{1,63}$', description: 'database name' }),
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 100, maximum: 120_000, description: 'how long a request waits for a database that is away before it answers 503 (also the start-up connection timeout)' }),
  EMBEDDED_DB: Type.Union([Type.Literal('disk'), Type.Literal('memory')], {
    default: 'disk', description: 'embedded server storage when MONGODB_URI is unset',
  }),
  DATA_DIR: Type.String({ default: './data', minLength: 1, description: 'where the embedded server keeps its files' }),
  TTL_SWEEP_INTERVAL_MS: Type.Integer({ default: 10_000, minimum: 50, maximum: 3_600_000, description: 'embedded server TTL sweep interval' }),
  BODY_LIMIT_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024, maximum: 104_857_600, description: 'largest accepted request body' }),
  KUBEORCH_UI_COMPAT: Bool(true, 'serve the KubeOrch web UI adapter under /kubeorch/v1/api (docs/kubeorch-ui.md); false removes those routes'),
  CORS_ORIGINS: Type.String({ default: '*', description: 'comma-separated allowed origins, or * for any (never with credentials)' }),
  TRUST_PROXY: Bool(false, 'trust X-Forwarded-* headers (behind a reverse proxy)'),
  RATE_LIMIT_MAX: Type.Integer({ default: 600, minimum: 1, description: 'requests per minute per client on rate-limited routes' }),
  SHUTDOWN_GRACE_MS: Type.Integer({ default: 10_000, minimum: 100, maximum: 120_000, description: 'how long in-flight work may finish on shutdown' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100, maximum: 600_000, description: 'longest time a client may take to send a whole request (headers and body); slower ones get 408 and are disconnected' }),
  HEADERS_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100, maximum: 600_000, description: 'longest time a client may take to send the request headers (capped at REQUEST_TIMEOUT_MS)' }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 100, maximum: 600_000, description: 'how long an idle keep-alive connection stays open between requests' }),
  // HTTPS with HTTP/2 (API.md §14, docs/configuration.md "Serving HTTP/2").
  TLS_CERT_FILE: Type.Optional(Type.String({ minLength: 1, description: 'PEM certificate (chain) file: with TLS_KEY_FILE the service speaks HTTPS, HTTP/2 and HTTP/1.1, on PORT' })),
  TLS_KEY_FILE: Type.Optional(Type.String({ minLength: 1, description: 'PEM private key file of TLS_CERT_FILE' })),
  TLS: Type.Optional(Type.Literal('self-signed', { description: 'self-signed: HTTPS and HTTP/2 with a development certificate made in DATA_DIR (tls-cert.pem, tls-key.pem; reused) for localhost, 127.0.0.1 and ::1, its SHA-256 fingerprint logged at start-up' })),
  ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 40, description: '32 random bytes, base64: seals cluster and registry credentials; required in production (development generates one in DATA_DIR/encryption-key)' })),
  ENCRYPTION_KEYS_OLD: Type.Optional(Type.String({ description: 'comma-separated earlier ENCRYPTION_KEYs that still open old values (see npm run rotate-keys)' })),
  ALLOW_INSECURE_CLUSTERS: Bool(false, 'allow plain http cluster servers, registries, OIDC issuers, Git repositories to import and notification webhooks'),
  OUTBOUND_ALLOW_CIDRS: Type.Optional(Type.String({ description: 'comma-separated CIDRs: when set, cluster servers, OIDC issuers, registries, Git imports and notification webhooks must resolve inside them; in production, loopback is refused unless listed here (docs/clusters-and-security.md)' })),
  CLUSTER_HEALTH_CRON: Type.String({ default: '* * * * *', minLength: 9, maxLength: 100, description: 'cron schedule of the cluster health check (every 60 s)' }),
  CLUSTER_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100, maximum: 120_000, description: 'per-cluster timeout of a health check or connection test' }),
  CLUSTER_HEALTH_CONCURRENCY: Type.Integer({ default: 8, minimum: 1, maximum: 100, description: 'clusters checked at once' }),
  METRICS_CACHE_MS: Type.Integer({ default: 15_000, minimum: 0, maximum: 3_600_000, description: 'how long GET /v1/api/metrics/overview serves a user the totals it last read from their clusters (0 = read on every call)' }),
  RUN_REPLY_WAIT_MS: Type.Integer({ default: 20_000, minimum: 0, maximum: 600_000, description: 'how long POST /workflows/:id/run waits for the run to finish before answering 202 with it still running' }),
  RUN_CLUSTER_CONCURRENCY: Type.Integer({ default: 8, minimum: 1, maximum: 100, description: 'objects applied at once per cluster, across all runs' }),
  RUN_HEARTBEAT_MS: Type.Integer({ default: 5000, minimum: 50, maximum: 600_000, description: 'how often a process marks its runs alive; a run silent for three periods (its process died) is failed as interrupted' }),
  RUN_READY_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 0, maximum: 1_800_000, description: 'how long a run waits for its workloads to become ready before failing their nodes' }),
  DRIFT_CHECK_INTERVAL_S: Type.Integer({ default: 300, minimum: 1, maximum: 86_400, description: 'how often every deployed workflow is compared with its clusters (drift detection; watch events are checked as they come); also the least time between two auto_sync runs of a workflow on one cluster' }),
  WATCH_BACKOFF_BASE_MS: Type.Integer({ default: 5000, minimum: 1, maximum: 600_000, description: 'first delay before a dropped resource watch reconnects; doubles per failed attempt, with jitter' }),
  WATCH_BACKOFF_MAX_MS: Type.Integer({ default: 60_000, minimum: 1, maximum: 3_600_000, description: 'longest delay between reconnect attempts of a resource watch' }),
  WATCH_PROBE_INTERVAL_MS: Type.Integer({ default: 2000, minimum: 0, maximum: 600_000, description: 'while watches of a cluster wait in backoff, how often one cheap request (GET /version) asks whether the cluster answers again; when it does, they reconnect at once (0 = off: only the backoff)' }),
  TERMINAL_IDLE_TIMEOUT_MS: Type.Integer({ default: 900_000, minimum: 100, maximum: 86_400_000, description: 'a terminal session with no input for this long is closed (with a close message)' }),
  TERMINAL_PING_MS: Type.Integer({ default: 30_000, minimum: 50, maximum: 600_000, description: 'how often the terminal WebSocket pings the client (proxies cut silent connections); a client that misses two pongs is dropped' }),
  LOG_LINE_MAX_BYTES: Type.Integer({ default: 16_384, minimum: 256, maximum: 1_048_576, description: 'longest pod log line streamed; longer lines are cut and marked' }),
  SSE_HEARTBEAT_MS: Type.Integer({ default: 15_000, minimum: 10, maximum: 600_000, description: 'period of the `: ping` comment on open SSE streams (keeps proxies from cutting idle ones)' }),
  SSE_BUFFER_SIZE: Type.Integer({ default: 256, minimum: 1, maximum: 100_000, description: 'events buffered per SSE subscriber; when full, events are dropped for that subscriber and a warning logged' }),
  // Several replicas (API.md §11, docs/replicas.md).
  REPLICA_MODE: Type.Union([Type.Literal('auto'), Type.Literal('single'), Type.Literal('shared')], {
    default: 'auto', description: 'single: this process is the only replica (events, watches and schedules stay in memory, as with the embedded database); shared: replicas share events, cluster watches and scheduled work through MongoDB; auto: shared when MONGODB_URI is set',
  }),
  EVENT_POLL_MS: Type.Integer({ default: 100, minimum: 5, maximum: 60_000, description: 'shared mode: how often each replica reads new events from the events collection' }),
  EVENT_RETENTION_S: Type.Integer({ default: 3600, minimum: 60, maximum: 7 * 86_400, description: 'shared mode: how long events are kept for clients resuming with Last-Event-ID on any replica' }),
  LEASE_TTL_MS: Type.Integer({ default: 15_000, minimum: 300, maximum: 600_000, description: 'shared mode: a replica that stops renewing its cluster leases for this long loses them to another (renewed every third of it)' }),
  // The audit log (docs/lifecycle.md).
  AUDIT_RETENTION_DAYS: Type.Integer({ default: 90, minimum: 1, maximum: 3650, description: 'how long audit log entries are kept (a TTL index on their time; a changed value replaces the index at start-up)' }),
  SSE_REPLAY_SIZE: Type.Integer({ default: 256, minimum: 0, maximum: 100_000, description: 'events kept per stream key for clients reconnecting with Last-Event-ID (0 = no replay)' }),
  // Per-user limits on long-lived connections (docs/clusters-and-security.md, "Limits"): over one → 429 naming the setting.
  MAX_STREAMS_PER_USER: Type.Integer({ default: 50, minimum: 1, maximum: 100_000, description: 'SSE streams of every kind (workflow, resource, pod logs, build, import, notification) one user may hold open at once; one more is refused with 429 (a new notification stream first ends the oldest of that user beyond MAX_NOTIFICATION_STREAMS_PER_USER, so it is refused only when other streams fill the limit)' }),
  MAX_TERMINALS_PER_USER: Type.Integer({ default: 5, minimum: 1, maximum: 10_000, description: 'terminal WebSocket sessions one user may hold open at once; one more is closed at once with an error message naming this limit' }),
  MAX_NOTIFICATION_STREAMS_PER_USER: Type.Integer({ default: 4, minimum: 1, maximum: 1000, description: 'notification streams one user may hold open on this replica (both prefixes together); one more ends the oldest with a final `replaced` event instead of being refused' }),
  MAX_LOG_FOLLOWS_PER_USER: Type.Integer({ default: 20, minimum: 1, maximum: 10_000, description: 'followed pod log streams (follow=true, each holding a connection to a cluster) one user may hold open at once; one more is refused with 429' }),
  STATS_REFRESH_CRON: Type.String({ default: '*/10 * * * *', minLength: 9, maxLength: 100, description: 'cron schedule of the dashboard statistics repair' }),
  PUBLIC_URL: Type.String({ default: 'http://localhost:3000', pattern: '^https?://', description: 'address clients reach this service at' }),
  // Sign-in (docs/auth.md).
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32, description: 'HS256 signing key, at least 32 characters; required in production (development generates one in DATA_DIR/jwt-secret)' })),
  JWT_ISSUER: Type.String({ default: 'cluster-workflow-orchestrator', minLength: 1, description: 'iss claim of the tokens this service issues and accepts' }),
  JWT_AUDIENCE: Type.String({ default: 'cluster-workflow-orchestrator-api', minLength: 1, description: 'aud claim of the tokens this service issues and accepts' }),
  OPEN_SIGNUP: Bool(false, 'let anyone register without an invite code (the first user never needs one)'),
  FRONTEND_URL: Type.String({ default: 'http://localhost:5173', pattern: '^https?://', description: 'web client that OAuth sign-in returns to (/auth/callback, /login)' }),
  OAUTH_PROVIDERS: Type.Optional(Type.String({ minLength: 2, description: 'JSON array of OAuth2/OIDC sign-in providers (docs/auth.md); unset = password sign-in only' })),
  AUTH_RATE_LIMIT_PER_IP: Type.Integer({ default: 30, minimum: 1, description: 'requests per window per client address on each sign-in route (login, register, refresh, OAuth)' }),
  AUTH_RATE_LIMIT_PER_EMAIL: Type.Integer({ default: 10, minimum: 1, description: 'login and register attempts per window per email address' }),
  AUTH_RATE_LIMIT_WINDOW_MS: Type.Integer({ default: 60_000, minimum: 1000, maximum: 86_400_000, description: 'window of the sign-in rate limits' }),
  AUTH_USER_CACHE_MS: Type.Integer({ default: 2000, minimum: 0, maximum: 5000, description: 'how long a token\'s user (role, existence) may be served from memory' }),
  // Heavy pure work off the event loop: compose analysis, rendering a large graph.
  WORKER_POOL_SIZE: Type.Integer({ default: 2, minimum: 1, maximum: 64, description: 'worker threads for compose analysis and for rendering large workflows; started on first use, ended when idle' }),
  WORKER_JOB_TIMEOUT_MS: Type.Integer({ default: 20_000, minimum: 50, maximum: 600_000, description: 'longest one analysis or render may take on a worker thread (from when it is queued); past it the thread is stopped and the request fails naming this limit' }),
  // Import (docs/import.md).
  IMPORT_SESSION_TTL_S: Type.Integer({ default: 3600, minimum: 60, maximum: 604_800, description: 'how long an import session (and its analysis) is kept after it was created' }),
  IMPORT_CONCURRENCY: Type.Integer({ default: 4, minimum: 1, maximum: 100, description: 'imports (clone and analysis) worked on at once by this process; the others wait, pending' }),
  IMPORT_GIT_MAX_BYTES: Type.Integer({ default: 52_428_800, minimum: 1024, maximum: 1_073_741_824, description: 'most bytes a Git import may receive from the Git host (the shallow clone\'s pack)' }),
  IMPORT_GIT_MAX_FILES: Type.Integer({ default: 5000, minimum: 1, maximum: 1_000_000, description: 'most files the commit a Git import fetches may hold' }),
  IMPORT_GIT_MAX_FILE_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024, maximum: 104_857_600, description: 'largest single file a Git import reads (compose files, .env files, Dockerfiles and the files a compose file names); larger ones are skipped, with a line in the import\'s log' }),
  IMPORT_GIT_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 100, maximum: 600_000, description: 'longest time a Git import may spend fetching; the transfer is aborted after it' }),
  // Notification channels: per-user webhooks (docs/lifecycle.md).
  WEBHOOK_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100, maximum: 120_000, description: 'longest one webhook delivery attempt may take, redirects included; a slower receiver counts as a failed try (retried)' }),
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ default: 30_000, minimum: 1, maximum: 3_600_000, description: 'delay before a webhook delivery\'s second try; the third waits twice as long (3 tries in all)' }),
  WEBHOOK_POLL_MS: Type.Integer({ default: 5000, minimum: 10, maximum: 600_000, description: 'how often each replica looks for webhook deliveries due that it did not queue itself (another replica\'s, or one a stopped replica left)' }),
  WEBHOOK_DELIVERY_RETENTION_DAYS: Type.Integer({ default: 14, minimum: 1, maximum: 365, description: 'how long a webhook delivery record (with its attempts) is kept' }),
  WEBHOOK_CHANNELS_PER_USER: Type.Integer({ default: 20, minimum: 1, maximum: 1000, description: 'most notification channels one user may have' }),
  // Image builds (docs/builds.md).
  BUILD_GIT_IMAGE: Type.String({ default: 'alpine/git:2.47.2', minLength: 1, maxLength: 512, description: 'image of the build Job\'s clone containers (its entrypoint must be `git`)' }),
  BUILD_BUILDER_IMAGE: Type.String({ default: 'moby/buildkit:v0.18.2-rootless', minLength: 1, maxLength: 512, description: 'image of the build Job\'s builder (BuildKit rootless, run as buildctl-daemonless.sh)' }),
  BUILD_TIMEOUT_MS: Type.Integer({ default: 1_800_000, minimum: 1000, maximum: 86_400_000, description: 'longest a build may run (the Job\'s activeDeadlineSeconds); it then fails' }),
  BUILD_TTL_AFTER_FINISHED_S: Type.Integer({ default: 3600, minimum: 0, maximum: 604_800, description: 'how long a finished build Job (and its pod, for inspection) stays in the cluster' }),
  BUILD_CPU_REQUEST: Type.String({ default: '500m', pattern: '^[0-9.]+m?$', description: 'CPU request of the builder container' }),
  BUILD_CPU_LIMIT: Type.String({ default: '2', pattern: '^[0-9.]+m?$', description: 'CPU limit of the builder container' }),
  BUILD_MEMORY_REQUEST: Type.String({ default: '512Mi', pattern: '^[0-9.]+(?:[KMGTPE]i?|[kmgtpe])?$', description: 'memory request of the builder container' }),
  BUILD_MEMORY_LIMIT: Type.String({ default: '4Gi', pattern: '^[0-9.]+(?:[KMGTPE]i?|[kmgtpe])?$', description: 'memory limit of the builder container' }),
  BUILD_LOG_MAX_LINES: Type.Integer({ default: 5000, minimum: 10, maximum: 1_000_000, description: 'log lines kept per build (the first half and the latest); the rest is counted and the build says logs_truncated' }),
  BUILD_LOG_MAX_BYTES: Type.Integer({ default: 2_097_152, minimum: 1024, maximum: 16_777_216, description: 'log bytes kept per build (the record must stay well under MongoDB\'s 16 MB document limit)' }),
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {
  constructor(message: string) { super(message); this.name = 'ConfigError' }
}

// Values of these may hold credentials, so an error names the variable but never echoes the value.
const SECRET_LIKE = /(SECRET|KEY|PASSWORD|TOKEN|URI)/

/** Reads the configuration from an environment map; throws ConfigError with a one-line message. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const name of Object.keys(ConfigSchema.properties)) {
    const value = env[name]
    if (value !== undefined && value !== '') raw[name] = value
  }
  const candidate = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw))
  const first = Value.Errors(ConfigSchema, candidate)[0]
  if (first) {
    const name = first.instancePath.split('/')[1] || first.params && Object.values(first.params)[0] || 'configuration'
    const shown = SECRET_LIKE.test(String(name)) || raw[name as string] === undefined ? '' : ` (got "${String(raw[name as string])}")`
    throw new ConfigError(`Invalid configuration: ${name} ${first.message}${shown}`)
  }
  const authProblem = authConfigProblem(candidate as Config)
  if (authProblem) throw new ConfigError(`Invalid configuration: ${authProblem}`)
  const tlsProblem = tlsConfigProblem(candidate as Config)
  if (tlsProblem) throw new ConfigError(`Invalid configuration: ${tlsProblem}`)
  const keyProblem = encryptionKeyProblem(candidate as Config)
  if (keyProblem) throw new ConfigError(`Invalid configuration: ${keyProblem}`)
  return candidate as Config
}

function tlsConfigProblem(config: Config): string | undefined {
  if (Boolean(config.TLS_CERT_FILE) !== Boolean(config.TLS_KEY_FILE)) {
    return `TLS_CERT_FILE and TLS_KEY_FILE go together: ${config.TLS_CERT_FILE ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'} is not set`
  }
  if (config.TLS && config.TLS_CERT_FILE) return 'TLS=self-signed and TLS_CERT_FILE/TLS_KEY_FILE exclude each other: unset one'
  return undefined
}

// Checked here, not when the key ring is loaded, so that a missing key stops start-up before the database
// opens (and locks) DATA_DIR.
function encryptionKeyProblem(config: Config): string | undefined {
  if (config.NODE_ENV === 'production' && !config.ENCRYPTION_KEY) {
    return 'ENCRYPTION_KEY is required in production (32 random bytes, base64, e.g. `openssl rand -base64 32`)'
  }
  const keys: Array<[string, string]> = config.ENCRYPTION_KEY ? [['ENCRYPTION_KEY', config.ENCRYPTION_KEY]] : []
  const old = (config.ENCRYPTION_KEYS_OLD ?? '').split(',').map((k) => k.trim()).filter(Boolean)
  old.forEach((k, i) => keys.push([`ENCRYPTION_KEYS_OLD[${i}]`, k]))
  for (const [name, value] of keys) {
    try {
      parseKey(value, name)
    } catch (err) {
      return (err as Error).message
    }
  }
  return undefined
}

/** Builds a configuration for tests and tools: defaults plus the given overrides, still validated. */
export function testConfig(overrides: Partial<Record<keyof Config, string | number | boolean>> = {}): Config {
  const env: Record<string, string> = { NODE_ENV: 'test', LOG_LEVEL: 'silent', EMBEDDED_DB: 'memory' }
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) env[k] = String(v)
  return loadConfig(env)
}
