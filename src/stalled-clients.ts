// Stalled clients are cut by timers this module owns, not only by Node's own request and headers timeouts.
//
// Why: Node checks those timeouts on an interval (connectionsCheckingInterval) over a list of tracked
// parsers kept in C++ (a std::set ordered by each parser's message start), and a connection it drops from
// that list, or never adds, is never checked again. A stalled body was measured held past 130 s on a
// server that had served ordinary requests before. Here every connection and every request carries its own
// deadline timer, armed and cleared from public events ('connection', 'request', 'upgrade', the response's
// 'finish', the socket's 'close'), so what the server served before cannot matter. Node's check still
// runs; whichever fires first answers, once (the client-error handler ignores a destroyed socket).
//
// - Headers: a new connection must complete its request headers within the headers timeout; an idle
//   keep-alive connection within the keep-alive timeout plus the headers timeout (Node closes idle ones
//   at the keep-alive timeout itself; this bounds a client that starts a request and stops).
// - Body: a request must be complete within the request timeout, counted from when the connection was
//   opened for its first request (as Node does) and from its headers for later ones.
// Either answers 408 `{error}` through the server's client-error handler and closes the connection; a
// request whose reply already started is only disconnected (a second status line would corrupt it).
// A deadline is judged on the next turn of the loop (setImmediate), after the poll phase has read what
// arrived: after a stall of the event loop itself, timers run before pending I/O, and a client whose
// request was waiting in the socket all along must not be cut for the server's own delay.
//
// With TLS (Node's secure HTTP/2 server, allowHTTP1) the connection these deadlines follow is the TLS
// socket, once its handshake is done ('secureConnection'; the handshake itself is bounded by the server's
// handshakeTimeout). A socket that negotiated h2 carries an HTTP/2 session whose streams are independent
// requests: the session is left to its own idle timeout, and each stream gets the body deadline alone,
// answered 408 on that stream (or the stream reset, if its reply started) without touching the others.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { constants as h2, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2'
import type { Socket } from 'node:net'
import { Server as TlsServer, type TLSSocket } from 'node:tls'

export interface StallLimits {
  requestTimeoutMs: number
  headersTimeoutMs: number
  keepAliveTimeoutMs: number
}

interface SocketState {
  timer?: NodeJS.Timeout
  openedAt: number
  served: number
  inFlight: number
}

function timeoutError(): NodeJS.ErrnoException {
  return Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })
}

/** Arms the deadlines on `server`; call once, before it listens. */
export function guardStalledClients(server: Server | Http2SecureServer, limits: StallLimits): void {
  const headersMs = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs)
  const states = new WeakMap<Socket, SocketState>()

  const cut = (socket: Socket) => {
    if (socket.destroyed) return
    // The handler (src/fastify-options.ts) writes the 408 and destroys; without one, just disconnect.
    if (!server.emit('clientError', timeoutError(), socket)) socket.destroy()
  }
  const disarm = (state: SocketState) => {
    if (state.timer) clearTimeout(state.timer)
    state.timer = undefined
  }
  const armHeaders = (socket: Socket, state: SocketState, ms: number) => {
    disarm(state)
    const timer: NodeJS.Timeout = setTimeout(() => setImmediate(() => { if (state.timer === timer) cut(socket) }), ms)
    timer.unref()
    state.timer = timer
  }

  const tls = server instanceof TlsServer
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    if (tls && (socket as TLSSocket).alpnProtocol === 'h2') return
    const state: SocketState = { openedAt: Date.now(), served: 0, inFlight: 0 }
    states.set(socket, state)
    armHeaders(socket, state, headersMs)
    socket.once('close', () => disarm(state))
  })

  server.on('request', (anyReq: IncomingMessage | Http2ServerRequest, anyRes: ServerResponse | Http2ServerResponse) => {
    if (anyReq.httpVersionMajor === 2) { guardStream(anyReq as Http2ServerRequest, anyRes as Http2ServerResponse, limits.requestTimeoutMs); return }
    const req = anyReq as IncomingMessage
    const res = anyRes as ServerResponse
    const socket = req.socket
    const state = states.get(socket)
    if (!state) return
    disarm(state)
    state.inFlight++
    const started = state.served === 0 ? state.openedAt : Date.now()
    state.served++
    const left = Math.max(0, limits.requestTimeoutMs - (Date.now() - started))
    // Checked when it fires rather than cleared on 'end': a body nobody reads (GET, or a reply sent
    // before reading) never emits 'end', yet the parser marks the request complete.
    const body = setTimeout(() => setImmediate(() => {
      if (req.complete || socket.destroyed) return
      if (res.headersSent) socket.destroy()
      else cut(socket)
    }), left)
    body.unref()
    const done = () => clearTimeout(body)
    // Nothing is added to the socket per request (a keep-alive connection serves many): the response's
    // 'close' also comes when the connection drops.
    res.once('close', () => {
      state.inFlight--
      if (req.complete || socket.destroyed) done()
    })
    res.once('finish', () => {
      if (req.complete) done()
      // Idle again: the next request's headers must come in time (unless another request is under way).
      if (state.inFlight <= 1 && !socket.destroyed) armHeaders(socket, state, limits.keepAliveTimeoutMs + headersMs)
    })
  })

  // An upgraded connection (the terminal WebSocket) is no longer HTTP: its deadline ends with the
  // upgrade. Node routes upgrades to 'upgrade' only when someone listens, so this listener is added only
  // in front of another one (now, or when one is added later), never on its own.
  const onUpgrade = (_req: IncomingMessage, socket: Socket) => {
    const state = states.get(socket)
    if (state) disarm(state)
  }
  const ensureFirst = () => {
    if (!server.listeners('upgrade').includes(onUpgrade)) server.prependListener('upgrade', onUpgrade)
  }
  if (server.listenerCount('upgrade') > 0) ensureFirst()
  server.on('newListener', (event: string | symbol, listener: unknown) => {
    if (event === 'upgrade' && listener !== onUpgrade) ensureFirst()
  })
}

/** What a client whose request did not arrive in time is told (408), on either protocol. */
export const REQUEST_TIMEOUT_MESSAGE = 'request took too long to arrive'
const TIMEOUT_BODY = JSON.stringify({ error: REQUEST_TIMEOUT_MESSAGE })

/** An HTTP/2 request must be complete within the request timeout; only its own stream is answered or reset. */
function guardStream(req: Http2ServerRequest, res: Http2ServerResponse, requestTimeoutMs: number): void {
  const stream = res.stream
  // `req.complete` waits for the body to be read, which a GET's never is; what counts is whether the
  // client has sent all of it (END_STREAM received: with the headers, or after the last DATA frame).
  const sentAll = () => req.complete || stream.endAfterHeaders || stream.state?.remoteClose === 1
  const timer = setTimeout(() => setImmediate(() => {
    if (sentAll() || stream.destroyed || stream.closed) return
    if (res.headersSent) { stream.close(h2.NGHTTP2_CANCEL); return }
    res.writeHead(408, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(TIMEOUT_BODY) })
    // The client may still be sending: once the answer is out, the stream is reset so it stops.
    res.end(TIMEOUT_BODY, () => { if (!stream.closed) stream.close(h2.NGHTTP2_NO_ERROR) })
  }), requestTimeoutMs)
  timer.unref()
  stream.once('close', () => clearTimeout(timer))
}
