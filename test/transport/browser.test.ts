// What a browser does (headless Chromium, Debian's `chromium`; skipped with the reason when absent).
//
// 1. Over HTTPS with HTTP/2 (TLS=self-signed, trusted with --ignore-certificate-errors) a page opens ten
//    streams and then makes a normal request: all succeed. Over HTTP/1.1 a browser holds at most six
//    connections per host and each stream keeps one, so the 7th stream and the request after it stall
//    (the KubeOrch UI's "Loading…"; bench/http2-streams.ts measures both).
// 2. Over plain HTTP, from a host name that is not localhost, Swagger UI (/docs) renders: no
//    upgrade-insecure-requests sends its scripts to an https nobody serves.
import t from 'tap'
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { once } from 'node:events'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { chromiumPath, dumpDom, openPage } from '../helpers/chromium.ts'
import { startTestDatabase } from '../helpers/database.ts'

const chromium = chromiumPath()
if (!chromium) {
  t.comment('chromium is not installed (Debian package `chromium`; .ci/run installs it): the browser tests skip')
  t.pass('skipped: no chromium')
} else {
  const database = await startTestDatabase()
  t.teardown(() => database.close())
  const dataDir = mkdtempSync(join(tmpdir(), 'cwo-tls-browser-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))

  t.test('over HTTP/2 a page holds ten streams and a request still gets through', async (t) => {
    const { app } = await startTestApp(t, { TLS: 'self-signed', DATA_DIR: dataDir }, { database })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const api = `https://localhost:${(app.server.address() as AddressInfo).port}`
    const versions: string[] = []
    app.server.on('request', (req: http.IncomingMessage) => { if (req.method !== 'OPTIONS') versions.push(req.httpVersion) })
    const user = await registerUser(app)
    const workflow = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: user.headers, payload: { name: 'browser' } })).json().id as string

    // The page comes from another origin (CORS allows any, without credentials); it reports back here.
    let report: (value: any) => void = () => {} // eslint-disable-line @typescript-eslint/no-explicit-any
    const reported = new Promise<any>((resolve) => { report = resolve }) // eslint-disable-line @typescript-eslint/no-explicit-any
    const page = `<!doctype html><script>
      const api = ${JSON.stringify(api)}, auth = { authorization: ${JSON.stringify(`Bearer ${user.token}`)} }
      const stream = (i) => fetch(api + '/v1/api/workflows/${workflow}/status/stream', { headers: auth }).then(async (r) => {
        const { value } = await r.body.getReader().read()
        return { status: r.status, first: new TextDecoder().decode(value).split('\\n').find((l) => l.startsWith('event:')) }
      })
      ;(async () => {
        const result = {}
        try {
          result.streams = await Promise.all(Array.from({ length: 10 }, (_, i) => stream(i)))
          const started = performance.now()
          const r = await fetch(api + '/v1/api/workflows/${workflow}', { headers: auth })
          result.request = { status: r.status, ms: performance.now() - started }
        } catch (e) { result.error = String(e) }
        await fetch('/result', { method: 'POST', body: JSON.stringify(result) })
      })()
    </script>`
    const server = http.createServer((req, res) => {
      if (req.url === '/result') {
        let body = ''
        req.on('data', (c) => { body += c })
        req.on('end', () => { res.end('ok'); report(JSON.parse(body)) })
        return
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end(page)
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
    const browser = openPage(chromium, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, ['--ignore-certificate-errors'])
    t.teardown(() => browser.stop())

    const result = await reported
    t.notOk(result.error, 'no request failed')
    t.equal(result.streams.length, 10)
    for (const [i, s] of result.streams.entries()) t.same(s, { status: 200, first: 'event: metadata' }, `stream ${i + 1} opened and sent its metadata`)
    t.equal(result.request.status, 200, 'the 11th request answered while the ten streams stay open')
    t.ok(versions.length >= 11 && versions.every((v) => v === '2.0'), `every request was HTTP/2 (${[...new Set(versions)].join(', ')})`)
    await browser.stop()
  })

  t.test('over plain HTTP from a non-local host name, Swagger UI renders its operations', async (t) => {
    const { app } = await startTestApp(t, {}, { database })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo
    const dom = await dumpDom(chromium, `http://docs.example.test:${port}/docs`, ['--host-resolver-rules=MAP docs.example.test 127.0.0.1'])
    t.match(dom, /class="swagger-ui/, 'Swagger UI mounted')
    t.match(dom, /class="opblock opblock-get/, 'the operations list rendered')
    t.match(dom, /\/v1\/api\/workflows/, 'with this API\'s paths')
  })
}
