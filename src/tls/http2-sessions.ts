// Shutdown of HTTP/2 connections. Node's server.close() sends GOAWAY to the sessions it knows of, but a
// connection accepted just before close() (its handshake still under way) becomes a session afterwards
// and was never told: the server then waited for it until the session's idle timeout (72 s). Every
// session is closed (GOAWAY, open streams finish on their own) once shutdown starts, including late ones.
import type { Http2SecureServer, ServerHttp2Session } from 'node:http2'

export function closeSessionsOnShutdown(server: Http2SecureServer, onShutdown: (close: () => void) => void): void {
  const sessions = new Set<ServerHttp2Session>()
  let closing = false
  server.on('session', (session: ServerHttp2Session) => {
    if (closing) { session.close(); return }
    sessions.add(session)
    session.once('close', () => sessions.delete(session))
  })
  onShutdown(() => {
    closing = true
    for (const session of sessions) session.close()
  })
}
