// The terminal of a tracked resource's pod (API.md §7): a WebSocket carrying JSON text frames between the
// browser and a shell started through the pod's exec subresource. Everything that can go wrong after the
// upgrade (not yours, viewer access, a shell outside the allowlist, the cluster refusing) is an `error`
// message followed by a `close` message, so a client has one way to learn why. The token may come in the
// query (browsers cannot set headers on a WebSocket); src/logger.ts keeps it out of every log line.
import { Type, type Static } from 'typebox'
import type { FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { ResourceParams } from '../../../schemas/resource.ts'
import { TerminalClientMessage, TerminalQuery, TerminalServerMessage } from '../../../schemas/pod-streams.ts'
import { AppError } from '../../errors.ts'
import { redactUrl } from '../../logger.ts'
import { ALLOWED_SHELLS, ExecFailed, isAllowedShell, openExec, type ExecSession } from '../../kube/exec-terminal.ts'
import type { LiveSession } from '../../../plugins/websocket.ts'

const tags = ['resources']
/** Output the client has not yet read, beyond which the session ends rather than buffering more. */
const MAX_BUFFERED_BYTES = 1024 * 1024
/** Input typed before the shell is connected, kept until it is. */
const MAX_EARLY_INPUT = 64 * 1024
const MAX_DIMENSION = 1000

const CLOSE = { normal: 1000, goingAway: 1001, policy: 1008, internal: 1011 } as const

const DESCRIPTION = `A WebSocket (\`101 Switching Protocols\`); a plain GET is answered 426. The access token may be sent as the \`token\` query parameter (browsers cannot set headers on a WebSocket) or as the usual Authorization header; it is never logged.

Only users who may deploy to the resource's cluster (owner, or shared as deployer/admin) may open a terminal. A user may hold MAX_TERMINALS_PER_USER sessions (default 5) at once: one more is upgraded and then refused at once with an \`error\` message naming the limit and a \`close\` message (reason "refused", close code 1008), as every refusal after the upgrade is. The \`shell\` (${ALLOWED_SHELLS.filter((s) => !s.startsWith('/')).join(', ')}, or their /bin/ paths; default sh) is what runs, with a TTY, in \`container\` (default: the pod's first) of \`pod\` (for a workload; default: a ready pod, newest first).

Frames are JSON text.
Server → client:
- \`{"type":"metadata","data":{"pod","container","namespace","cluster","shell"}}\` once the shell is connected
- \`{"type":"output","data":"<terminal output>"}\`
- \`{"type":"error","data":"<message>"}\` (a refused request, a bad frame, the cluster refusing)
- \`{"type":"close","data":{"reason":"<why>","exit_code":<number|null>}}\`, always last, then the socket closes

Client → server:
- \`{"type":"input","data":"<keystrokes>"}\`
- \`{"type":"resize","rows":<1-${MAX_DIMENSION}>,"cols":<1-${MAX_DIMENSION}>}\`

A malformed frame is answered with an \`error\` message and the session goes on. The server pings every TERMINAL_PING_MS (a client missing two pongs is dropped) and closes a session without input for TERMINAL_IDLE_TIMEOUT_MS (reason "idle timeout"). Frames are limited to 64 KiB.`

type ClientFrame = { type: 'input'; data: string } | { type: 'resize'; rows: number; cols: number }

/** A client frame, or the reason it is not one. */
export function parseClientFrame(raw: string): ClientFrame | { problem: string } {
  let value: unknown
  try { value = JSON.parse(raw) } catch { return { problem: 'frames must be JSON text: {"type":"input","data":"..."} or {"type":"resize","rows":N,"cols":N}' } }
  const frame = value as Record<string, unknown> | null
  if (frame?.type === 'input') {
    return typeof frame.data === 'string' ? { type: 'input', data: frame.data } : { problem: 'an input frame needs "data" as a string' }
  }
  if (frame?.type === 'resize') {
    const ok = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= MAX_DIMENSION
    return ok(frame.rows) && ok(frame.cols) ? { type: 'resize', rows: frame.rows, cols: frame.cols } : { problem: `a resize frame needs "rows" and "cols" as integers from 1 to ${MAX_DIMENSION}` }
  }
  return { problem: 'unknown frame type; expected "input" or "resize"' }
}

/** How a server message is written on the socket: this API's frames, or another dialect's (the KubeOrch UI adapter). */
export type TerminalEncoder = (type: 'metadata' | 'output' | 'error' | 'close', data: unknown) => string
const plainFrames: TerminalEncoder = (type, data) => JSON.stringify({ type, data })

type TerminalRequest = FastifyRequest<{ Params: { id: string }; Querystring: Static<typeof TerminalQuery> }>

/** A terminal session on an upgraded socket, from the first check to the last `close` message. */
export function serveTerminal(app: App, socket: WebSocket, req: TerminalRequest, encode: TerminalEncoder = plainFrames) {
  const { TERMINAL_IDLE_TIMEOUT_MS: idleMs, TERMINAL_PING_MS: pingMs } = app.config
  const targets = app.podTargets
  const query = req.query as { shell?: string; pod?: string; container?: string }
  const log = req.log.child({ resource_id: req.params.id, user_id: req.user.id })
  // The audit log's open and close entries: counts of what went through, never the bytes (API.md §12).
  const audit = app.audit.terminal(req, req.params.id)
  let exec: ExecSession | null = null
  let ended = false
  let releaseSlot: (() => void) | undefined
  let early = ''
  let pendingSize = null as { rows: number; cols: number } | null
  let unanswered = 0

  const send = (type: Parameters<TerminalEncoder>[0], data: unknown) => {
    if (socket.readyState === socket.OPEN) socket.send(encode(type, data))
  }
  const live: LiveSession = { shutdown: (reason) => end(reason, null, CLOSE.goingAway) }
  // Two unanswered pings in a row, not one: a pong can be late behind a burst of output.
  const pinger = setInterval(() => {
    if (unanswered >= 2) { end('the client stopped answering pings', null, CLOSE.goingAway); socket.terminate(); return }
    unanswered++
    socket.ping()
  }, pingMs)
  let idle = setTimeout(() => end('idle timeout', null), idleMs)
  const touch = () => { clearTimeout(idle); idle = setTimeout(() => end('idle timeout', null), idleMs) }

  function end(reason: string, exitCode: number | null, code: number = CLOSE.normal) {
    if (ended) return
    ended = true
    releaseSlot?.()
    clearInterval(pinger)
    clearTimeout(idle)
    app.liveSessions.delete(live)
    send('close', { reason, exit_code: exitCode })
    if (socket.readyState === socket.OPEN) socket.close(code)
    exec?.close()
    audit.ended(exitCode)
    log.info({ reason, exit_code: exitCode, url: redactUrl(req.url) }, 'terminal session ended')
  }
  /** `status`: the HTTP status the refusal stands for, in the audit log. */
  const refuse = (message: string, status: number, code: number = CLOSE.policy) => {
    audit.refused(status)
    send('error', message)
    end('refused', null, code)
  }

  app.liveSessions.add(live)
  // MAX_TERMINALS_PER_USER: taken before anything else, given back by end() (every way a session ends).
  try {
    releaseSlot = app.userLimits.acquire('terminals', req.user.id)
  } catch (err) {
    refuse((err as Error).message, err instanceof AppError ? err.statusCode : 429)
    return
  }
  socket.on('pong', () => { unanswered = 0 })
  socket.on('close', () => end('the client closed the connection', null))
  socket.on('error', () => end('the client connection failed', null))
  socket.on('message', (data, isBinary) => {
    if (ended) return
    if (isBinary) { send('error', 'frames must be JSON text'); return }
    const frame = parseClientFrame(String(data))
    if ('problem' in frame) { send('error', frame.problem); return }
    touch()
    if (frame.type === 'input') {
      audit.input(frame.data)
      if (exec) exec.input(frame.data)
      else if (early.length + frame.data.length <= MAX_EARLY_INPUT) early += frame.data
      else send('error', 'the shell is not connected yet; input beyond 64 KiB was dropped')
    } else if (exec) exec.resize(frame.rows, frame.cols)
    else pendingSize = { rows: frame.rows, cols: frame.cols }
  })

  const shell = query.shell || 'sh'
  if (!isAllowedShell(shell)) {
    refuse(`shell "${shell.slice(0, 64)}" is not allowed; use one of ${ALLOWED_SHELLS.join(', ')}`, 400)
    return
  }
  void (async () => {
    const target = await targets.resolve(req.user.id, req.params.id, 'deployer', { pod: query.pod || undefined, container: query.container || undefined })
    if (target.problem || !target.container) { refuse(target.problem ?? 'no container to run the shell in', 404); return }
    if (ended) return
    const container = target.container
    // Output (the prompt) or even the exit can come before `metadata` is sent; held until it is, so
    // `metadata` is always the first message of a session.
    let held: string[] | null = []
    let heldExit: { code: number | null; reason: string } | null = null
    const emit = (text: string) => {
      send('output', text)
      audit.output(text)
      if (socket.bufferedAmount > MAX_BUFFERED_BYTES) end('the client is not reading the output fast enough', null, CLOSE.policy)
    }
    const session = await openExec(target.kc, { namespace: target.namespace, pod: target.pod, container, shell }, {
      output: (text) => { if (held) held.push(text); else emit(text) },
      exit: (code, reason) => { if (held) heldExit = { code, reason }; else end(reason, code) },
    })
    if (ended) { session.close(); return }
    exec = session
    log.info({ pod: target.pod, container, namespace: target.namespace, cluster: target.cluster.name, shell }, 'terminal session started')
    audit.opened()
    send('metadata', { pod: target.pod, container, namespace: target.namespace, cluster: target.cluster.name, shell })
    const pending = held
    held = null
    for (const text of pending) emit(text)
    const exited = heldExit as { code: number | null; reason: string } | null
    if (exited) { end(exited.reason, exited.code); return }
    if (pendingSize) session.resize(pendingSize.rows, pendingSize.cols)
    if (early) session.input(early)
    early = ''
  })().catch((err: unknown) => {
    if (err instanceof AppError && err.statusCode < 500) { refuse(err.message, err.statusCode); return }
    if (err instanceof AppError || err instanceof ExecFailed) { refuse(err.message, err instanceof AppError ? err.statusCode : 502, CLOSE.internal); return }
    log.error({ err }, 'terminal session failed')
    refuse('internal error', 500, CLOSE.internal)
  })
}

export default async function terminalRoutes(app: App) {
  app.route({
    method: 'GET',
    url: '/v1/api/resources/:id/exec/terminal',
    config: { tokenInQuery: true },
    schema: {
      tags, operationId: 'openResourceTerminal', summary: 'a shell in the resource\'s pod, over WebSocket',
      description: DESCRIPTION, params: ResourceParams, querystring: TerminalQuery,
      response: {
        101: Type.Null({ description: 'switching to the WebSocket protocol; the session speaks the JSON frames described above' }),
        426: Type.Ref('ErrorResponse', { description: 'not a WebSocket upgrade request (after the resource is found)' }),
        ...errorResponses(400, 401, 404),
      },
      'x-websocket-messages': { server: TerminalServerMessage, client: TerminalClientMessage },
    },
    // A plain GET: the same ownership answer as every resource route, then the hint that this is a WebSocket.
    handler: async (req) => {
      await app.services.resources.get(req.user.id, req.params.id)
      throw new AppError(426, 'this route is a WebSocket: connect with an Upgrade: websocket request')
    },
    wsHandler: (socket: WebSocket, req) => serveTerminal(app, socket, req),
  })
}
