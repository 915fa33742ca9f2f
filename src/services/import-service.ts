// Import sessions (API.md §8 "Import", §7 `import:<id>`): a compose file or a Git repository analysed in the
// background into a workflow graph, then applied to a workflow or made into a new one.
//
// `analyze` records the session and answers at once; the work (fetch, analysis) runs detached from the
// request, recording its status in the database and publishing `progress`, `log`, then `complete` or
// `failed` on the session's stream, in that order. Each process marks its sessions alive; a session whose
// process died is failed as interrupted at the next start (or by a live replica's heartbeat), as runs are.
//
// Never stored, logged or echoed: the compose content, interpolation variables, and a Git token (the token
// lives in this module's memory for the one fetch, and every log line passes a redactor holding it).
import { Heartbeat, staleBefore } from './heartbeat.ts'
import { coalescingWriter, type CoalescingWriter } from './coalescing-writer.ts'
import { BadRequest, Conflict, NotFound, Unavailable, AppError } from '../errors.ts'
import { newId } from '../repositories/ids.ts'
import { TERMINAL_STATUSES, type ImportSession, type ImportSessionDoc, type ImportSessionRepository, type ImportStatus, type ImportProgress, type ImportOutcome } from '../repositories/import-sessions.ts'
import type { Workflow } from '../repositories/workflows.ts'
import type { OutboundPolicy } from '../net/outbound-policy.ts'
import type { WorkflowService } from './workflow-service.ts'
import { assertValidGraph, type GraphEdge, type GraphNode } from './workflow-graph.ts'
import { analyzeCompose, analyzeFileTree, ImportTooLarge, MAX_COMPOSE_BYTES, type Analysis, type ImportOptions } from './import/index.ts'
import { NODE_WIDTH } from './import/layout.ts'
import type { fetchRepository, GitFetchLimits } from './import/git-fetch.ts'
import type { WorkerPool } from '../workers/pool.ts'
import type { EventBus } from '../events/bus.ts'
import { analysisText, type AnalysisText } from './import/analysis-text.ts'
import { RunLog } from './run-log.ts'
import { limiter } from './run-limiter.ts'
import { redactor, type Redact } from './run-redaction.ts'

export interface AnalyzeRequest extends ImportOptions {
  source: 'compose' | 'git'
  content?: string
  url?: string
  branch?: string
  path?: string
  token?: string
  username?: string
  /** An upload's file name, shown on the session. */
  filename?: string
}

export interface ApplyRequest { import_id: string; workflow_id: string; mode: 'merge' | 'replace' }
export interface CreateFromImportRequest { import_id: string; name: string; description?: string; cluster_id?: string | null }

interface Logger { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void }

export interface ImportServiceDeps {
  sessions: ImportSessionRepository
  workflows: WorkflowService
  /** The stream hub's publish (late-bound: the hub is created after the services). */
  publish: (key: string, type: string, data: unknown) => void
  policy: OutboundPolicy
  gitLimits: GitFetchLimits
  /** How long a session is kept (IMPORT_SESSION_TTL_S). */
  ttlMs: number
  /** How often this process marks its sessions alive; silent for three periods = abandoned. */
  heartbeatMs: number
  log: Logger
  /** Imports worked on at once by this process (IMPORT_CONCURRENCY); the rest wait, `pending`. */
  concurrency: number
  /** The fetch; a test may replace it. */
  fetch?: typeof fetchRepository
  /** Where analyses run (a worker thread, within WORKER_JOB_TIMEOUT_MS); without one (a test of apply alone) they run inline. */
  pool?: WorkerPool
  /** Announces each session's end (`import.finished`), e.g. for notifications. */
  bus?: EventBus
}

export interface StartedImport { session: ImportSession; done: Promise<ImportSession> }

export const importKey = (id: string): string => `import:${id}`

/** The transfer phases isomorphic-git reports, as spans of the session's progress (the rest are quick). */
const FETCH_PHASES: Record<string, [number, number]> = { 'Receiving objects': [5, 50], 'Resolving deltas': [50, 60] }

const INTERRUPTED = 'interrupted: the service stopped before this import finished; analyze again'
/** New nodes of a merge start this far right of the existing graph. */
const MERGE_GAP_X = 160

export class ImportService {
  private readonly inFlight = new Map<string, Promise<ImportSession>>()
  private readonly instanceId = newId()
  private readonly heartbeat: Heartbeat
  private closing = false
  /** A clone holds up to IMPORT_GIT_MAX_BYTES in memory and an analysis a worker thread: both are bounded per process. */
  private readonly slots: ReturnType<typeof limiter>

  constructor(private readonly deps: ImportServiceDeps) {
    this.heartbeat = new Heartbeat({
      periodMs: this.deps.heartbeatMs,
      beat: (at) => this.deps.sessions.heartbeat([...this.inFlight.keys()], at),
      sweep: () => this.sweep(),
      onError: (err) => this.deps.log.warn({ err: { message: String((err as Error)?.message) } }, 'import heartbeat failed'),
    })
    this.slots = limiter(deps.concurrency)
  }

  /** Checks the request, records the session (pending) and starts the work; `done` settles with the finished session (never rejects). */
  async analyze(ownerId: string, request: AnalyzeRequest): Promise<StartedImport> {
    if (this.closing) throw new Unavailable('the service is shutting down; try again in a moment')
    const url = await this.checkRequest(request)
    const now = new Date()
    const session = await this.deps.sessions.create({
      owner_id: ownerId, source: request.source, status: 'pending', progress: 0, message: 'waiting to start', error: null, analysis_json: null,
      filename: request.filename ?? null, url: url ?? null, branch: request.branch ?? null, path: request.path ?? null, commit: null, logs: [],
      created_at: now, updated_at: now, finished_at: null, expires_at: new Date(now.getTime() + this.deps.ttlMs),
      instance_id: this.instanceId, heartbeat_at: now,
    })
    // After the reply's turn: the 201 should not wait behind the start of the work.
    const done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.slots(() => this.execute(ownerId, session, request))).catch(async (err: unknown) => {
      // Recording the outcome failed (the database went away, e.g. at shutdown): the next start recovers it.
      this.deps.log.error({ import_id: session.id, err: { message: String((err as Error)?.message) } }, 'the import\'s outcome could not be recorded')
      return { ...session, status: 'failed' as const, error: 'the import\'s outcome could not be recorded' }
    })
    this.inFlight.set(session.id, done)
    void done.finally(() => this.inFlight.delete(session.id))
    return { session, done }
  }

  async get(ownerId: string, id: string): Promise<ImportSession> {
    const session = await this.deps.sessions.get(ownerId, id)
    if (!session) throw new NotFound('import session')
    return session
  }

  /** Streams are news, the database is the record: a hub that is not there yet (start-up) or any more (shutdown) loses nothing. */
  private publish(key: string, type: string, data: unknown): void {
    try {
      this.deps.publish(key, type, data)
    } catch (err) {
      this.deps.log.warn({ stream: key, err: { message: String((err as Error)?.message) } }, 'an import event could not be published')
    }
  }

  /** Whether the session has ended (its stream sends the terminal event and ends). */
  static isFinished(session: ImportSession): boolean {
    return TERMINAL_STATUSES.has(session.status)
  }

  /** The imported graph into an existing workflow: beside its nodes (merge) or instead of them (replace). */
  async apply(ownerId: string, request: ApplyRequest): Promise<Workflow> {
    const analysis = await this.completedAnalysis(ownerId, request.import_id)
    const workflow = await this.deps.workflows.get(ownerId, request.workflow_id)
    const imported = graphOf(analysis)
    const graph = request.mode === 'replace' ? imported : mergeGraphs({ nodes: workflow.nodes as GraphNode[], edges: workflow.edges as GraphEdge[] }, imported)
    return this.deps.workflows.save(ownerId, workflow.id, graph)
  }

  /** A new workflow holding the imported graph; when saving the graph fails, no empty workflow is left behind. */
  async createWorkflow(ownerId: string, request: CreateFromImportRequest): Promise<Workflow> {
    const analysis = await this.completedAnalysis(ownerId, request.import_id)
    return this.createWorkflowWithGraph(ownerId, request, graphOf(analysis))
  }

  /**
   * A new workflow holding an imported graph that a client sends back (the KubeOrch UI keeps the analysis
   * and may merge several), checked as a save checks it; when saving fails, no empty workflow is left behind.
   */
  async createWorkflowWithGraph(ownerId: string, request: Omit<CreateFromImportRequest, 'import_id'>, graph: Graph): Promise<Workflow> {
    assertValidGraph(graph.nodes, graph.edges)
    const workflow = await this.deps.workflows.create(ownerId, { name: request.name, description: request.description, cluster_id: request.cluster_id })
    try {
      return await this.deps.workflows.save(ownerId, workflow.id, graph)
    } catch (err) {
      await this.deps.workflows.delete(ownerId, workflow.id).catch((cleanup: unknown) => {
        this.deps.log.error({ workflow_id: workflow.id, err: { message: String((cleanup as Error)?.message) } }, 'could not remove the workflow whose imported graph failed to save')
      })
      throw err
    }
  }

  /** The analysis, parsed: a fresh copy each time (the graph it gives is the caller's to change). */
  private async completedAnalysis(ownerId: string, importId: string): Promise<Analysis> {
    const session = await this.get(ownerId, importId)
    if (session.status !== 'completed' || !session.analysis) {
      throw new Conflict(session.status === 'failed'
        ? `import ${session.id} failed (${session.error ?? 'no reason recorded'}); analyze again`
        : `import ${session.id} is still ${session.status}; apply it once it has completed`)
    }
    return JSON.parse(session.analysis.text) as Analysis
  }

  /** What analyze refuses before recording anything; answers the URL as it will be stored (git). */
  private async checkRequest(request: AnalyzeRequest): Promise<string | undefined> {
    const { source } = request
    if (source === 'compose') {
      if (request.content === undefined || request.content.trim() === '') throw new BadRequest('body/content is required for source "compose" (the compose file)')
      for (const field of ['url', 'branch', 'path', 'token', 'username'] as const) {
        if (request[field] !== undefined) throw new BadRequest(`body/${field} is for source "git"; source "compose" takes content`)
      }
      const bytes = Buffer.byteLength(request.content)
      if (bytes > MAX_COMPOSE_BYTES) throw new ImportTooLarge(`the compose file is ${bytes} bytes; the limit is ${MAX_COMPOSE_BYTES}`)
      return undefined
    }
    if (request.url === undefined) throw new BadRequest('body/url is required for source "git" (the repository\'s URL)')
    if (request.content !== undefined) throw new BadRequest('body/content is for source "compose"; source "git" takes url')
    if (request.username !== undefined && request.token === undefined) throw new BadRequest('body/username goes with body/token')
    const url = await this.deps.policy.check(request.url, 'url')
    if (url.search || url.hash) throw new BadRequest('url must not carry a query or fragment')
    return url.href
  }

  // The background part

  private async execute(ownerId: string, session: ImportSession, request: AnalyzeRequest): Promise<ImportSession> {
    // Its turn came after shutdown began: close() has recorded it as interrupted.
    if (this.closing) return { ...session, status: 'failed', error: INTERRUPTED }
    const id = session.id
    const redact: Redact = redactor(request.token ? [request.token] : [])
    const log = new RunLog(redact)
    const key = importKey(id)
    const state = { status: session.status as ImportStatus, progress: 0, message: session.message }
    const saver = this.progressSaver(id, () => ({ ...state, logs: log.lines() }))
    const addLog = (line: string) => {
      log.add(line)
      const lines = log.lines()
      this.publish(key, 'log', { line: lines[lines.length - 1] })
      saver.touch()
    }
    // Published at once, in call order; the database follows (one write at a time, the newest state last).
    const step = (status: ImportStatus, progress: number, message: string) => {
      Object.assign(state, { status, progress, message })
      this.publish(key, 'progress', { status, progress, message })
      saver.touch()
    }

    let analysis: AnalysisText | null = null
    let error: string | null = null
    let extra: { commit?: string; branch?: string } = {}
    try {
      const options: ImportOptions = { env: request.env, env_file: request.env_file, profiles: request.profiles, ingress: request.ingress }
      if (request.source === 'compose') {
        step('analyzing', 50, 'analyzing the compose file')
        await saver.flush()
        addLog(`analyzing ${request.filename ?? 'the compose file'} (${Buffer.byteLength(request.content!)} bytes)`)
        const content = request.content!
        analysis = this.deps.pool
          ? await this.deps.pool.run('analyzeCompose', { content, options: strip(options) }, 'the analysis')
          : analysisText(analyzeCompose(content, strip(options)))
      } else {
        step('cloning', 5, 'fetching the repository')
        await saver.flush()
        // The Git client is loaded on the first Git import, not at start-up.
        const fetched = await (this.deps.fetch ?? (await import('./import/git-fetch.ts')).fetchRepository)({ url: session.url!, branch: request.branch, token: request.token, username: request.username }, {
          policy: this.deps.policy, limits: this.deps.gitLimits, onLog: addLog,
          onProgress: (phase, fraction) => {
            const span = FETCH_PHASES[phase]
            if (!span || fraction === null) return
            // An event per 5 points, not per packet.
            const progress = Math.floor((span[0] + fraction * (span[1] - span[0])) / 5) * 5
            if (progress > state.progress) step('cloning', progress, `fetching the repository: ${phase.toLowerCase()}`)
          },
        })
        extra = { commit: fetched.commit, ...(fetched.branch && { branch: fetched.branch }) }
        step('analyzing', 70, `analyzing ${fetched.files.size} files of commit ${fetched.commit.slice(0, 12)}`)
        await saver.flush()
        const treeOptions = { ...strip(options), repo_url: session.url!, branch: fetched.branch ?? request.branch, path: request.path }
        analysis = this.deps.pool
          ? await this.deps.pool.run('analyzeFileTree', { files: fetched.files, options: treeOptions }, 'the analysis')
          : analysisText(analyzeFileTree(fetched.files, treeOptions))
      }
      const { counts } = analysis
      addLog(`found ${counts.services} services: ${counts.nodes} nodes, ${counts.edges} edges, ${counts.warnings} warnings, ${counts.errors} errors`)
    } catch (err) {
      error = redact(describe(err))
      if (!(err instanceof AppError)) this.deps.log.error({ import_id: id, err: { name: (err as Error)?.name, message: redact(String((err as Error)?.message ?? err)) } }, 'import failed unexpectedly')
      addLog(`failed: ${error}`)
    }
    await saver.flush()
    const finished = await this.deps.sessions.finish(id, analysis
      ? { status: 'completed', progress: 100, message: 'analysis complete', error: null, analysis_json: analysis.json, logs: log.lines(), ...extra }
      : { status: 'failed', progress: state.progress, message: 'failed', error, analysis_json: null, logs: log.lines(), ...extra })
    // Marked interrupted meanwhile (a shutdown gave up on it): that record stands.
    if (!finished) return (await this.deps.sessions.get(ownerId, id)) ?? { ...session, status: 'failed', error: INTERRUPTED }
    // The event's `{analysis}` as JSON text: the analysis is never walked on the event loop (events/raw-json.ts).
    if (finished.status === 'completed') this.publish(key, 'complete', finished.analysis!.wrappedIn('analysis'))
    else this.publish(key, 'failed', { error: finished.error ?? 'failed' })
    this.deps.bus?.emit('import.finished', { owner_id: ownerId, import_id: id, status: finished.status === 'completed' ? 'completed' : 'failed', error: finished.error ?? null })
    return finished
  }

  /** Writes the progress of a session still going, one write at a time, the newest state last. */
  private progressSaver(id: string, current: () => ImportProgress): CoalescingWriter {
    return coalescingWriter(() => this.deps.sessions.progress(id, current()))
  }

  // Start-up and shutdown

  /** Fails the sessions a dead process left unfinished, then keeps this process's sessions marked alive. */
  async recover(): Promise<number> {
    const count = await this.sweep()
    this.heartbeat.start()
    return count
  }

  /** Fails the sessions other processes abandoned; answers how many this process failed (another replica may fail some first). */
  private async sweep(): Promise<number> {
    const abandoned = await this.deps.sessions.abandoned(this.instanceId, staleBefore(this.deps.heartbeatMs))
    let failed = 0
    // Conditional on the session being as read: replicas sweeping together never both fail (and notify) one.
    for (const doc of abandoned) if (await this.interrupt(doc, INTERRUPTED, (outcome) => this.deps.sessions.settleAbandoned(doc, outcome))) failed++
    return failed
  }

  /** Records the session as failed with `error` (by `record`: by default, if it is still unfinished); false when it had ended. */
  private async interrupt(doc: ImportSessionDoc, error: string, record = (outcome: ImportOutcome) => this.deps.sessions.finish(doc._id, outcome)): Promise<boolean> {
    const finished = await record({
      status: 'failed', progress: doc.progress, message: 'failed', error, analysis_json: null, logs: [...(doc.logs ?? []), `${new Date().toISOString()} failed: ${error}`],
    })
    if (!finished) return false
    this.publish(importKey(doc._id), 'failed', { error })
    this.deps.bus?.emit('import.finished', { owner_id: doc.owner_id, import_id: doc._id, status: 'failed', error })
    this.deps.log.warn({ import_id: doc._id }, `import ${doc._id} was ${doc.status} when the service stopped: marked failed (interrupted)`)
    return true
  }

  /** Refuses new imports, gives those in flight `graceMs`, then records the rest as interrupted. */
  async close(graceMs: number): Promise<void> {
    this.closing = true
    this.heartbeat.stop()
    if (!this.inFlight.size) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled([...this.inFlight.values()]),
      new Promise((resolve) => { timer = setTimeout(resolve, graceMs) }),
    ])
    clearTimeout(timer)
    for (const doc of await this.deps.sessions.unfinishedOf(this.instanceId)) {
      await this.interrupt(doc, 'interrupted: the service shut down before this import finished; analyze again')
    }
  }
}

/** The analysis options without absent keys (the analysis treats a present `undefined` as given). */
function strip(options: ImportOptions): ImportOptions {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as ImportOptions
}

function describe(err: unknown): string {
  if (err instanceof AppError) return err.message
  return 'the analysis failed unexpectedly'
}

// Merging

interface Graph { nodes: GraphNode[]; edges: GraphEdge[] }

/** The analysis's nodes and edges as the workflow stores them (the analysis is a fresh parse: no copy needed). */
function graphOf(analysis: Analysis): Graph {
  return { nodes: analysis.nodes as unknown as GraphNode[], edges: analysis.edges as unknown as GraphEdge[] }
}

/**
 * The incoming graph added beside the existing one. Node and edge ids already taken get the smallest free
 * `-N` suffix; so do names (`data.name`) taken by an existing node of the same type, with one suffix per
 * name across types, so a Deployment and its Service renamed together keep matching names. The new nodes
 * are moved right of the existing graph's bounding box, top-aligned with it. Deterministic: the same two
 * graphs always merge the same way.
 */
export function mergeGraphs(existing: Graph, incoming: Graph): Graph {
  const takenIds = new Set(existing.nodes.map((n) => n.id))
  const idMap = new Map<string, string>()
  for (const node of incoming.nodes) {
    const id = freeName(node.id, (candidate) => !takenIds.has(candidate), 200)
    takenIds.add(id)
    idMap.set(node.id, id)
  }

  const nameOf = (n: GraphNode) => (typeof n.data?.name === 'string' ? n.data.name : undefined)
  const takenNames = new Set(existing.nodes.map((n) => `${n.type}\u0000${nameOf(n) ?? ''}`).filter((k) => !k.endsWith('\u0000')))
  const typesByName = new Map<string, Set<string>>()
  for (const node of incoming.nodes) {
    const name = nameOf(node)
    if (name === undefined) continue
    typesByName.set(name, (typesByName.get(name) ?? new Set()).add(node.type))
  }
  const nameMap = new Map<string, string>()
  for (const name of [...typesByName.keys()].sort()) {
    const types = [...typesByName.get(name)!]
    const renamed = freeName(name, (candidate) => types.every((type) => !takenNames.has(`${type}\u0000${candidate}`)), 63)
    for (const type of types) takenNames.add(`${type}\u0000${renamed}`)
    nameMap.set(name, renamed)
  }

  const box = boundingBox(existing.nodes)
  const incomingBox = boundingBox(incoming.nodes)
  const dx = box && incomingBox ? box.right + MERGE_GAP_X - incomingBox.left : 0
  const dy = box && incomingBox ? box.top - incomingBox.top : 0

  const nodes = incoming.nodes.map((node) => {
    const name = nameOf(node)
    const position = node.position as { x?: unknown; y?: unknown } | undefined
    return {
      ...node, id: idMap.get(node.id)!,
      ...(position && typeof position.x === 'number' && typeof position.y === 'number' && { position: { ...position, x: position.x + dx, y: position.y + dy } }),
      ...(node.data && name !== undefined && { data: { ...node.data, name: nameMap.get(name)! } }),
    }
  })
  const takenEdgeIds = new Set(existing.edges.map((e) => e.id))
  const edges = incoming.edges.map((edge) => {
    const id = freeName(edge.id, (candidate) => !takenEdgeIds.has(candidate), 200)
    takenEdgeIds.add(id)
    return { ...edge, id, source: idMap.get(edge.source) ?? edge.source, target: idMap.get(edge.target) ?? edge.target }
  })
  return { nodes: [...existing.nodes, ...nodes], edges: [...existing.edges, ...edges] }
}

/** `base` if free, else `base-2`, `base-3`, ... cut to `maxLength` (DNS names: no trailing dash before the suffix). */
function freeName(base: string, isFree: (candidate: string) => boolean, maxLength: number): string {
  if (isFree(base)) return base
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const candidate = `${base.slice(0, maxLength - suffix.length).replace(/-+$/, '')}${suffix}`
    if (isFree(candidate)) return candidate
  }
}

function boundingBox(nodes: GraphNode[]): { left: number; top: number; right: number } | null {
  let box: { left: number; top: number; right: number } | null = null
  for (const node of nodes) {
    const p = node.position as { x?: unknown; y?: unknown } | undefined
    if (!p || typeof p.x !== 'number' || typeof p.y !== 'number' || !Number.isFinite(p.x) || !Number.isFinite(p.y)) continue
    const width = typeof node.width === 'number' && Number.isFinite(node.width) ? node.width : NODE_WIDTH
    box = box
      ? { left: Math.min(box.left, p.x), top: Math.min(box.top, p.y), right: Math.max(box.right, p.x + width) }
      : { left: p.x, top: p.y, right: p.x + width }
  }
  return box
}
