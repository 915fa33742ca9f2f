// npm run bench:http2 — what a browser gets when a page holds ten SSE streams and then makes one more
// request (the KubeOrch UI after a few page changes), over plain HTTP/1.1 and over HTTPS with HTTP/2
// (TLS=self-signed), in headless Chromium (Debian's `chromium`). Chromium holds at most 6 connections per
// host on HTTP/1.1, each open stream keeps one: streams 7–10 and the request wait for a stream to end.
// Each wait is cut at BENCH_WAIT_MS (10,000) and printed as "stalled". Prints, per protocol, the time to
// the first bytes of each stream and of the 11th request.
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.ts'
import { testConfig } from '../src/config.ts'
import { chromiumPath, openPage } from '../test/helpers/chromium.ts'

const WAIT_MS = Number(process.env.BENCH_WAIT_MS ?? 10_000)
const chromium = chromiumPath()
if (!chromium) { console.log('chromium is not installed (apt-get install chromium)'); process.exit(1) }

interface Result { streams: Array<number | null>; request: number | null }

async function measure(tls: boolean): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cwo-bench-h2-'))
  const app = await buildApp(testConfig({ DATA_DIR: dataDir, OPEN_SIGNUP: true, ...(tls && { TLS: 'self-signed' as const }) }))
  await app.listen({ host: '127.0.0.1', port: 0 })
  const api = `${tls ? 'https' : 'http'}://localhost:${(app.server.address() as AddressInfo).port}`
  const signup = await app.inject({ method: 'POST', url: '/v1/api/auth/register', payload: { email: 'bench@example.test', password: 'a-long-password-1', name: 'Bench' } })
  const token = signup.json().token as string
  const workflow = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: { authorization: `Bearer ${token}` }, payload: { name: 'bench' } })).json().id as string
  const page = `<!doctype html><script>
    const api = ${JSON.stringify(api)}, headers = { authorization: 'Bearer ${token}' }, wait = ${WAIT_MS}
    const timed = async (url) => {
      const started = performance.now()
      const ac = new AbortController(); const timer = setTimeout(() => ac.abort(), wait)
      try { const r = await fetch(url, { headers, signal: ac.signal }); await r.body.getReader().read(); return performance.now() - started }
      catch { return null } finally { clearTimeout(timer) }
    }
    ;(async () => {
      const streams = Array.from({ length: 10 }, () => timed(api + '/v1/api/workflows/${workflow}/status/stream'))
      await Promise.race([Promise.all(streams), new Promise((r) => setTimeout(r, 200))])
      const request = await timed(api + '/v1/api/workflows/${workflow}')
      await fetch('/result', { method: 'POST', body: JSON.stringify({ streams: await Promise.all(streams), request }) })
    })()
  </script>`
  let report: (r: Result) => void = () => {}
  const reported = new Promise<Result>((resolve) => { report = resolve })
  const server = http.createServer((req, res) => {
    if (req.url !== '/result') { res.writeHead(200, { 'content-type': 'text/html' }).end(page); return }
    let body = ''
    req.on('data', (c) => { body += c })
    req.on('end', () => { res.end(); report(JSON.parse(body)) })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const browser = openPage(chromium!, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, ['--ignore-certificate-errors'])
  const result = await reported
  await browser.stop()
  server.closeAllConnections()
  server.close()
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
  return result
}

const show = (ms: number | null) => ms === null ? `stalled > ${WAIT_MS} ms` : `${Math.round(ms)} ms`
for (const [name, tls] of [['HTTP/1.1 (plain)', false], ['HTTP/2 (TLS)', true]] as const) {
  const r = await measure(tls)
  console.log(`${name}: streams 1-10 first bytes: ${r.streams.map(show).join(', ')}`)
  console.log(`${name}: 11th request: ${show(r.request)}`)
}
