// WebSocket support (the terminal only). Open sessions register here so a shutdown ends each with its
// `close` message rather than cutting the socket; frames are bounded (a terminal sends keystrokes).
import fp from 'fastify-plugin'
import websocket from '@fastify/websocket'

/** Largest frame a client may send; larger ones close the socket (1009). */
export const WS_MAX_PAYLOAD = 64 * 1024

export interface LiveSession { shutdown(reason: string): void }

declare module 'fastify' {
  interface FastifyInstance { liveSessions: Set<LiveSession> }
}

export default fp(async (app) => {
  const sessions = new Set<LiveSession>()
  app.decorate('liveSessions', sessions)
  await app.register(websocket, {
    options: { maxPayload: WS_MAX_PAYLOAD },
    preClose(this: typeof app, done: () => void) {
      for (const s of [...sessions]) s.shutdown('the service is shutting down')
      // Anything that did not register (a socket between upgrade and its handler) is closed too.
      for (const client of this.websocketServer.clients) client.close(1001)
      // Not waited for: a peer that never answers the closing handshake must not hold the shutdown.
      this.websocketServer.close()
      done()
    },
  })
}, { name: 'websocket' })
