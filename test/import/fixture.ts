// What the import tests share: the app listening (streams need a socket) with two users, calls as either,
// following a session's stream to its end, multipart bodies, sessions seeded straight into the collection
// (so apply and access tests do not depend on the analysis), and a search of everything stored and logged.
import { randomBytes } from 'node:crypto'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { listen, openStream, type SseStream } from '../streams/sse-client.ts'
import { newId } from '../../src/repositories/ids.ts'
import type { testConfig } from '../../src/config.ts'

interface Teardown { teardown(fn: () => unknown): void }

export interface Reply { status: number; body: any; headers: Record<string, unknown> } // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ImportFixture extends TestApp {
  base: string
  owner: TestUser
  other: TestUser
  call(user: TestUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object): Promise<Reply>
  /** Starts an analysis as `user`; fails the test's expectations through the returned status. */
  analyze(user: TestUser, body: object): Promise<Reply>
  /** The session's stream from its first event (Last-Event-ID 0), read until the server ends it. */
  follow(user: TestUser, id: string): Promise<SseStream>
  /** The session once its stream has ended (completed or failed). */
  finished(user: TestUser, id: string): Promise<any> // eslint-disable-line @typescript-eslint/no-explicit-any
  /** A completed session with this analysis, owned by `user`, inserted directly. */
  seedSession(user: TestUser, analysis: object, fields?: Record<string, unknown>): Promise<string>
  /** Every import session and workflow document and every log line, as one string to search. */
  everythingStored(): Promise<string>
}

export async function importFixture(t: Teardown, config: Parameters<typeof testConfig>[0] = {}): Promise<ImportFixture> {
  const testApp = await startTestApp(t, config)
  const { app, logs } = testApp
  const base = await listen(app)
  const owner = await registerUser(app)
  const other = await registerUser(app)
  const call: ImportFixture['call'] = async (user, method, url, payload) => {
    const res = await app.inject({ method, url, headers: user.headers, ...(payload && { payload }) })
    return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers }
  }
  const follow = async (user: TestUser, id: string) => {
    const stream = await openStream(base, `/v1/api/import/${id}/stream`, { authorization: `Bearer ${user.token}`, 'last-event-id': '0' })
    if (stream.status !== 200) throw new Error(`stream answered ${stream.status}: ${JSON.stringify(stream.body)}`)
    await Promise.race([stream.ended, new Promise((_r, reject) => setTimeout(() => reject(new Error(`the stream of import ${id} did not end`)), 25_000).unref())])
    return stream
  }
  return {
    ...testApp, base, owner, other, call, follow,
    analyze: (user, body) => call(user, 'POST', '/v1/api/import/analyze', body),
    finished: async (user, id) => {
      await follow(user, id)
      return (await call(user, 'GET', `/v1/api/import/${id}`)).body
    },
    seedSession: async (user, analysis, fields = {}) => {
      const now = new Date()
      const id = newId()
      await app.db.collection('import_sessions').insertOne({
        _id: id as never, owner_id: user.user.id, source: 'compose', status: 'completed', progress: 100, message: 'analysis complete', error: null,
        analysis, filename: null, url: null, branch: null, path: null, commit: null, logs: [], created_at: now, updated_at: now, finished_at: now,
        expires_at: new Date(now.getTime() + 3_600_000), instance_id: 'seeded', heartbeat_at: now, ...fields,
      })
      return id
    },
    everythingStored: async () => {
      const docs = await Promise.all(['import_sessions', 'workflows'].map((c) => app.db.collection(c).find({}).toArray()))
      return JSON.stringify(docs) + logs.join('\n')
    },
  }
}

/** A multipart/form-data body: `parts` in order, files as `{ filename, content }`. */
export function multipart(parts: Array<[string, string | { filename: string; content: string | Buffer }]>): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----import-test-${randomBytes(8).toString('hex')}`
  const chunks: Buffer[] = []
  for (const [name, value] of parts) {
    if (typeof value === 'string') {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${value.filename}"\r\nContent-Type: application/yaml\r\n\r\n`))
      chunks.push(Buffer.isBuffer(value.content) ? value.content : Buffer.from(value.content))
      chunks.push(Buffer.from('\r\n'))
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

export const WEB_AND_DB = `services:
  web:
    image: nginx:1.27
    ports:
      - "8080:80"
    depends_on:
      - db
  db:
    image: postgres:16
    environment:
      POSTGRES_DB: shop
    volumes:
      - dbdata:/var/lib/postgresql/data
volumes:
  dbdata: {}
`

/** A small analysis as the analysis would produce it: a Deployment with its Service, and a second Deployment. */
export function sampleAnalysis() {
  return {
    services: [],
    nodes: [
      { id: 'web', type: 'deployment', position: { x: 0, y: 0 }, data: { name: 'web', namespace: 'default', image: 'nginx:1.27', replicas: 1, port: 80 } },
      { id: 'web-service', type: 'service', position: { x: 360, y: 0 }, data: { name: 'web', namespace: 'default', port: 8080, targetPort: 80 } },
      { id: 'cache', type: 'deployment', position: { x: 0, y: 130 }, data: { name: 'cache', namespace: 'default', image: 'redis:7', replicas: 1, port: 6379 } },
    ],
    edges: [{ id: 'web-to-web-service', source: 'web', target: 'web-service' }],
    warnings: [],
    errors: [],
  }
}
