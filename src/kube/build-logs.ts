// Follows one container's log of a build pod to its end: the kubelet's `log` subresource with follow and
// timestamps, read line by line. Made with node's http(s) and the cluster's credentials, as pod-logs.ts
// does and for the same reason (aborting client-node's followed log can crash the process); a resumed
// follow (`sinceTime`) skips the lines it already delivered.
import { request as httpRequest, type Agent, type IncomingMessage } from 'node:http'
import { request as httpsRequest, type RequestOptions } from 'node:https'
import type { KubeConfig } from '@kubernetes/client-node'
import { LineSplitter, parseLine } from './pod-logs.ts'
import { describeNetworkError } from '../net/network-errors.ts'

export interface ContainerLogTarget { namespace: string; pod: string; container: string }

export type FollowEnd = { ended: true } | { ended: false; status: number | null; message: string }

export interface FollowOptions {
  maxLineBytes: number
  connectTimeoutMs: number
  signal: AbortSignal
  /** RFC 3339 time of the last line already delivered: only later lines are read. */
  sinceTime?: string
}

export function containerLogPath(t: ContainerLogTarget, sinceTime?: string): string {
  const q = new URLSearchParams({ container: t.container, follow: 'true', timestamps: 'true' })
  if (sinceTime) q.set('sinceTime', sinceTime)
  return `/api/v1/namespaces/${encodeURIComponent(t.namespace)}/pods/${encodeURIComponent(t.pod)}/log?${q}`
}

/** Resolves when the log ends (the container stopped), the request fails, or `signal` aborts (then ended: false). */
export async function followContainerLog(kc: KubeConfig, target: ContainerLogTarget, onLine: (line: string, timestamp: string | null) => void, opts: FollowOptions): Promise<FollowEnd> {
  const server = kc.getCurrentCluster()?.server
  if (!server) return { ended: false, status: null, message: 'the cluster has no server address' }
  const options: RequestOptions = { method: 'GET', headers: { Accept: '*/*' } }
  try {
    await kc.applyToHTTPSOptions(options)
  } catch {
    return { ended: false, status: null, message: 'the cluster\'s credentials could not be applied' }
  }
  const agent = options.agent as Agent | undefined
  if (opts.signal.aborted) { agent?.destroy(); return { ended: false, status: null, message: 'stopped' } }
  const url = new URL(containerLogPath(target, opts.sinceTime), server.replace(/\/+$/, '') + '/')
  const since = opts.sinceTime ? Date.parse(opts.sinceTime) : null
  return new Promise<FollowEnd>((resolve) => {
    let settled = false
    const settle = (end: FollowEnd) => {
      if (settled) return
      settled = true
      clearTimeout(connectTimer)
      opts.signal.removeEventListener('abort', abort)
      req.destroy()
      agent?.destroy()
      resolve(end)
    }
    const abort = () => settle({ ended: false, status: null, message: 'stopped' })
    const req = (url.protocol === 'http:' ? httpRequest : httpsRequest)(url, options)
    const connectTimer = setTimeout(() => settle({ ended: false, status: null, message: 'the cluster did not answer the log request in time' }), opts.connectTimeoutMs)
    opts.signal.addEventListener('abort', abort, { once: true })
    req.on('error', (err) => settle({ ended: false, status: null, message: describeNetworkError(err, 'cluster')?.message ?? 'the log stream from the cluster broke off' }))
    req.on('response', (res: IncomingMessage) => {
      clearTimeout(connectTimer)
      res.on('error', () => settle({ ended: false, status: null, message: 'the log stream from the cluster broke off' }))
      if (res.statusCode !== 200) {
        res.resume()
        settle({ ended: false, status: res.statusCode ?? null, message: `the cluster answered ${res.statusCode} to the log request` })
        return
      }
      const splitter = new LineSplitter(opts.maxLineBytes, (raw) => {
        const { line, timestamp } = parseLine(raw, false)
        // sinceTime has a one-second grain on some kubelets: lines at or before the resume point were delivered.
        if (since !== null && timestamp && Date.parse(timestamp) <= since) return
        onLine(line, timestamp)
      })
      res.on('data', (chunk: Buffer) => { if (!settled) splitter.write(chunk) })
      res.on('end', () => { if (!settled) { splitter.end(); settle({ ended: true }) } })
      res.on('close', () => { if (!res.complete) settle({ ended: false, status: null, message: 'the log stream from the cluster broke off' }) })
    })
    req.end()
  })
}
