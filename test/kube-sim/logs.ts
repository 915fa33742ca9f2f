import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ObjectApi } from './api.ts'
import type { ContainerRuntime, Kubelet } from './controllers/kubelet.ts'
import { boolParam, commonHeaders, intParam } from './http.ts'
import type { Target } from './rest.ts'
import { badRequest } from './status.ts'
import { timestampNano, type JsonObject, type KObject } from './util.ts'

// Container logs are synthesised, deterministically: line i of a run is stamped
// startedAt + i*logIntervalMs, so a test can predict exactly what `logs` returns. Lines come from
// the pod annotation `kube-sim.io/logs` (one per line) first, then numbered heartbeat lines.
// Containers that really run (git, the builder) have their actual output instead, followed live.

export const logsAnnotation = 'kube-sim.io/logs'

export function logLine(pod: KObject, c: { name: string; image: string }, i: number): string {
  const custom = (pod.metadata.annotations?.[logsAnnotation] ?? '').split('\n').filter((l) => l !== '')
  if (i === 0 && !custom.length) return `kube-sim: container ${c.name} started (image ${c.image})`
  const j = custom.length ? i : i - 1
  if (j < custom.length) return custom[j]
  return `kube-sim: ${pod.metadata.name}/${c.name} heartbeat ${j - custom.length + 1}`
}

interface Run { startedAt: number; finishedAt?: number; exitCode?: number }

export class LogService {
  private readonly open = new Set<() => void>()

  constructor(private readonly api: ObjectApi, private readonly kubelet: Kubelet, private readonly intervalMs: number) {}

  closeAll(): void { for (const stop of [...this.open]) stop() }

  private lines(pod: KObject, c: ContainerRuntime, run: Run, until: number): { ts: number; text: string }[] {
    const end = run.finishedAt ?? until
    const n = Math.max(0, Math.floor((Math.min(end, until) - run.startedAt) / this.intervalMs) + 1)
    const out: { ts: number; text: string }[] = []
    for (let i = 0; i < n; i++) out.push({ ts: run.startedAt + i * this.intervalMs, text: logLine(pod, c, i) })
    if (run.finishedAt !== undefined && run.exitCode) out.push({ ts: run.finishedAt, text: `kube-sim: ${c.name} exited with code ${run.exitCode}` })
    return out
  }

  /** Starts a 200 log response: the line filter (since/tail), the formatter (timestamps) and a writer honouring limitBytes. */
  private open200(res: ServerResponse, q: URLSearchParams) {
    const timestamps = boolParam(q, 'timestamps')
    const tail = intParam(q, 'tailLines')
    const limitBytes = intParam(q, 'limitBytes')
    const sinceSeconds = intParam(q, 'sinceSeconds')
    const sinceTime = q.get('sinceTime')
    const cutoff = sinceSeconds !== undefined ? Date.now() - sinceSeconds * 1000 : sinceTime ? Date.parse(sinceTime) : -Infinity
    const select = (lines: { ts: number; text: string }[]) => {
      const all = lines.filter((l) => l.ts >= cutoff)
      return tail !== undefined && tail >= 0 ? all.slice(Math.max(0, all.length - tail)) : all
    }
    const fmt = (l: { ts: number; text: string }) => `${timestamps ? `${timestampNano(l.ts)} ` : ''}${l.text}\n`
    let left = limitBytes ?? Infinity
    res.writeHead(200, { 'Content-Type': 'text/plain', ...commonHeaders(), 'Transfer-Encoding': 'chunked' })
    res.flushHeaders()
    const write = (s: string): boolean => {
      if (left <= 0) return false
      const b = Buffer.from(s)
      const chunk = b.length > left ? b.subarray(0, left) : b
      left -= chunk.length
      res.write(chunk)
      return left > 0
    }
    return { select, fmt, write, budgetLeft: () => left }
  }

  /** The log of a container that really ran: its output as written, followed until the process exits. */
  private serveOutput(res: ServerResponse, pod: KObject, c: ContainerRuntime, q: URLSearchParams, previous: boolean): void {
    if (previous) throw badRequest(`previous terminated container "${c.name}" in pod "${pod.metadata.name}" not found`)
    const out = c.output!
    const { select, fmt, write } = this.open200(res, q)
    let sent = out.lines.length
    for (const l of select(out.lines)) if (!write(fmt(l))) { res.end(); return }
    if (!boolParam(q, 'follow') || out.ended) { res.end(); return }
    let unsubscribe = () => {}
    const stop = () => { unsubscribe(); this.open.delete(stop); if (!res.writableEnded) res.end() }
    this.open.add(stop)
    res.on('close', stop)
    unsubscribe = out.subscribe(() => {
      for (const l of out.lines.slice(sent)) if (!write(fmt(l))) { stop(); return }
      sent = out.lines.length
      if (out.ended) stop()
    })
  }

  async serve(_req: IncomingMessage, res: ServerResponse, t: Target, q: URLSearchParams): Promise<void> {
    const pod = this.api.get(t.rt, t.namespace, t.name!)
    const specContainers = (pod.spec?.containers ?? []) as JsonObject[]
    const names = specContainers.map((c) => c.name as string)
    let name = q.get('container') ?? undefined
    if (!name) {
      if (names.length !== 1) throw badRequest(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [${names.join(' ')}]`)
      name = names[0]
    }
    const initNames = ((pod.spec?.initContainers ?? []) as JsonObject[]).map((c) => c.name as string)
    if (!names.includes(name) && !initNames.includes(name)) throw badRequest(`container ${name} is not valid for pod ${pod.metadata.name}`)
    const c = this.kubelet.container(pod.metadata.uid!, name)
    const previous = boolParam(q, 'previous')
    if (!c || c.stage === 'creating' || c.stage === 'pull-error' || c.stage === 'pull-backoff') {
      if (previous) throw badRequest(`previous terminated container "${name}" in pod "${pod.metadata.name}" not found`)
      const why = c && c.stage !== 'creating' ? 'trying and failing to pull image' : 'ContainerCreating'
      throw badRequest(`container "${name}" in pod "${pod.metadata.name}" is waiting to start: ${why}`)
    }
    if (c.output) { this.serveOutput(res, pod, c, q, previous); return }
    let run: Run
    if (previous) {
      if (!c.lastTerminated || c.restarts === 0) throw badRequest(`previous terminated container "${name}" in pod "${pod.metadata.name}" not found`)
      run = c.lastTerminated
    } else if (c.stage === 'crash-backoff') run = c.lastTerminated!
    else run = { startedAt: c.startedAt!, finishedAt: c.finishedAt, exitCode: c.exitCode }

    const follow = boolParam(q, 'follow') && !previous
    const { select, fmt, write, budgetLeft } = this.open200(res, q)
    const all = select(this.lines(pod, c, run, Date.now()))
    for (const l of all) if (!write(fmt(l))) break
    const produced = this.lines(pod, c, run, Date.now()).length
    if (!follow || run.finishedAt !== undefined || budgetLeft() <= 0) { res.end(); return }

    // Follow: emit each new line as its time comes, until the container stops or the client leaves.
    let sent = produced
    const uid = pod.metadata.uid!
    const startedAt = run.startedAt
    let timer: NodeJS.Timeout | undefined
    const stop = () => { if (timer) clearTimeout(timer); timer = undefined; this.open.delete(stop); if (!res.writableEnded) res.end() }
    this.open.add(stop)
    res.on('close', stop)
    const tick = () => {
      const cur = this.kubelet.container(uid, name!)
      const sameRun = cur && cur.startedAt === startedAt
      const r: Run = sameRun ? { startedAt, finishedAt: cur.finishedAt, exitCode: cur.exitCode } : { ...run, finishedAt: cur?.lastTerminated?.finishedAt ?? Date.now(), exitCode: cur?.lastTerminated?.exitCode }
      const now = this.lines(pod, c, r, Date.now())
      for (const l of now.slice(sent)) if (!write(fmt(l))) { stop(); return }
      sent = now.length
      if (!sameRun || r.finishedAt !== undefined) { stop(); return }
      schedule()
    }
    const schedule = () => { timer = setTimeout(tick, this.intervalMs - ((Date.now() - startedAt) % this.intervalMs) + 1).unref() }
    schedule()
  }
}
