// GET /v1/api/import/:id/stream: an import session's progress over SSE (API.md §7 `import:<id>`). The
// session is read (owner-scoped) before the stream starts, so another user's session is a plain 404. A stream
// ends after the session's terminal event (`complete` or `failed`); a session that had already finished
// sends its terminal event at once (after any events a Last-Event-ID asked to replay) and ends.
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { ImportCompleteEvent, ImportFailedEvent, ImportLogEvent, ImportParams, ImportProgressEvent } from '../../../schemas/import.ts'
import { streamResponse, tooManyStreams } from '../../../schemas/streams.ts'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { serveStream, type Reframe } from '../../events/sse.ts'
import type { StreamEvent, StreamHub, SubscribeOptions, Subscription } from '../../events/stream-hub.ts'
import { ImportService, importKey } from '../../services/import-service.ts'
import type { ImportSession } from '../../repositories/import-sessions.ts'
import { sessionJson } from './session-json.ts'

const TERMINAL_EVENTS = new Set(['complete', 'failed'])

export const importStreamDoc = {
  description: [
    'Server-Sent Events. Frames: `id: <n>\\nevent: <type>\\ndata: <one line of JSON>\\n\\n` (LF only); the first frame also carries `retry: 3000` and is the `metadata` snapshot (the session); a `: ping` comment comes every SSE_HEARTBEAT_MS (15 s).',
    'Send `Authorization: Bearer <token>`. A client reconnecting with `Last-Event-ID` first gets the events it missed that are still in the replay window.',
    'Events, in order: `metadata` (the session), `progress` (status and percentage at each step), `log` (one line each), then `complete` (the analysis) or `failed` (the error); the stream ends after either. The stream of a session that has already finished sends its terminal event and ends.',
  ].join('\n\n'),
  events: {
    metadata: { description: 'the session as GET /v1/api/import/{id} returns it', schema: { $ref: '#/components/schemas/ImportSession' } },
    progress: { description: 'the session moved on: status, progress (0-100) and what it is doing', schema: ImportProgressEvent },
    log: { description: 'a line of the session\'s log', schema: ImportLogEvent },
    complete: { description: 'the analysis finished; the stream ends', schema: ImportCompleteEvent },
    failed: { description: 'the session failed; the stream ends', schema: ImportFailedEvent },
  },
}

export default async function importStreamRoutes(app: App) {
  app.get('/v1/api/import/:id/stream', {
    schema: {
      tags: ['import'], operationId: 'streamImport', summary: 'an import session\'s progress (SSE)',
      description: importStreamDoc.description, params: ImportParams,
      response: { 200: streamResponse('`text/event-stream`: metadata, progress, log, complete, failed'), ...errorResponses(401, 404), ...tooManyStreams },
      'x-events': importStreamDoc.events,
    },
  }, (req, reply) => serveImportStream(app, req, reply))
}

/** The stream of one import session, in this API's dialect or another (`reframe`, the KubeOrch UI adapter). */
export function serveImportStream(app: App, req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, reframe?: Reframe) {
  const hub = new EndingHub(app.streams)
  return serveStream(req, reply, {
    hub, key: importKey(req.params.id), reframe,
    // As GET answers it, the analysis as its stored text (session-json.ts).
    metadata: async () => sessionJson(hub.snapshot(await app.services.imports.get(req.user.id, req.params.id))),
  })
}

/**
 * One stream's view of the hub: its subscription ends after a terminal event, and, when the snapshot shows a
 * finished session, it passes on what the hub replays at once (a Last-Event-ID) and then the terminal event
 * built from the snapshot unless the replay already carried it.
 */
class EndingHub implements StreamHub {
  private finished: StreamEvent | null = null
  private sub: EndingSubscription | null = null

  constructor(private readonly hub: StreamHub) {}

  snapshot(session: ImportSession): ImportSession {
    if (ImportService.isFinished(session)) {
      this.finished = session.status === 'completed'
        ? { id: 0, type: 'complete', data: session.analysis?.wrappedIn('analysis') ?? {} }
        : { id: 0, type: 'failed', data: { error: session.error ?? 'failed' } }
    }
    return session
  }

  publish(key: string, type: string, data: unknown): void { this.hub.publish(key, type, data) }
  subscriberCount(key: string): number { return this.hub.subscriberCount(key) }
  close(): void { this.sub?.close() }

  subscribe(key: string, opts?: SubscribeOptions): Subscription {
    this.sub = new EndingSubscription(this.hub.subscribe(key, opts), () => this.finished)
    return this.sub
  }
}

class EndingSubscription implements Subscription {
  private ended = false
  /** The newest id passed on: a terminal event built from the snapshot comes after it. */
  private lastId: number

  constructor(private readonly inner: Subscription, private readonly finished: () => StreamEvent | null) {
    this.lastId = inner.since
  }

  get closed(): boolean { return this.ended || this.inner.closed }
  get since(): number { return this.inner.since }
  get done(): Promise<void> { return this.inner.done }
  close(): void { this.ended = true; this.inner.close() }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    const it = this.inner[Symbol.asyncIterator]()
    try {
      while (!this.closed) {
        const terminal = this.finished()
        // A finished session: only what is already queued (a replay), then the end.
        const next = terminal
          ? await Promise.race([it.next(), new Promise<null>((resolve) => setImmediate(() => resolve(null)))])
          : await it.next()
        if (next === null) {
          yield { ...terminal!, id: this.lastId + 1 }
          return
        }
        if (next.done) return
        this.lastId = Math.max(this.lastId, next.value.id)
        yield next.value
        if (TERMINAL_EVENTS.has(next.value.type)) return
      }
    } finally {
      this.close()
    }
  }
}
