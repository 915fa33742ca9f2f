// An interactive shell in a container: client-node's Exec (the pod's exec subresource over WebSocket, the
// v5/v4 channel protocols) with a TTY. client-node's handler is given its own streams and wrapped so that
// nothing it does can reach the process: its default streams are process.stdin/stdout (a v5 "close stdout"
// frame would end our stdout), and a frame on an unknown channel throws inside a socket event handler.
import { PassThrough } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import type { KubeConfig, V1Status } from '@kubernetes/client-node'
import type { WebSocketInterface } from '@kubernetes/client-node/dist/web-socket-handler.js'
import { k8s } from './client.ts'

/** The shells a terminal may start: the spec's allowlist, by name or /bin/ path. */
export const ALLOWED_SHELLS: readonly string[] = ['sh', 'bash', 'ash', 'zsh'].flatMap((s) => [s, `/bin/${s}`])

export const isAllowedShell = (shell: string): boolean => ALLOWED_SHELLS.includes(shell)

const RESIZE_CHANNEL = 4

export interface ExecTarget { namespace: string; pod: string; container: string; shell: string }

export interface ExecHandlers {
  /** Terminal output (stdout; a TTY merges stderr into it), decoded as UTF-8 across chunk boundaries. */
  output: (text: string) => void
  /** Once: the shell ended (exit code from the status channel) or the connection to the container closed (null). */
  exit: (exitCode: number | null, reason: string) => void
}

export interface ExecSession {
  input(data: string): void
  resize(rows: number, cols: number): void
  /** Ends the shell's connection; `exit` is called if it has not been. */
  close(): void
}

/** The exit code a metav1.Status from the status channel carries: 0 on Success, the ExitCode cause otherwise. */
export function exitCodeOf(status: V1Status | null | undefined): number | null {
  if (!status) return null
  if (status.status === 'Success') return 0
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode')
  const code = cause?.message !== undefined ? Number(cause.message) : NaN
  return Number.isInteger(code) ? code : null
}

const guarded = <A extends unknown[]>(fn: ((...args: A) => boolean) | null): ((...args: A) => boolean) | null =>
  fn && ((...args: A) => { try { return fn(...args) } catch { return true } })

/** Words for a failed exec upgrade, never the raw error text (it can carry the request URL). */
function describeExecFailure(err: unknown): string {
  const text = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? '')
  const status = /Unexpected server response: (\d{3})/.exec(text)?.[1]
  if (status === '400') return 'the cluster refused to start the shell (400): the container may not be running or the shell may not exist in it'
  if (status === '401' || status === '403') return `the cluster refused the credentials for exec (${status})`
  if (status === '404') return 'the pod is no longer in the cluster'
  if (status) return `the cluster answered ${status} to the exec request`
  return 'the cluster did not answer the exec request'
}

export class ExecFailed extends Error {}

export async function openExec(kc: KubeConfig, target: ExecTarget, handlers: ExecHandlers): Promise<ExecSession> {
  const { Exec } = await k8s()
  const { WebSocketHandler } = await import('@kubernetes/client-node/dist/web-socket-handler.js')
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  for (const s of [stdin, stdout, stderr]) s.on('error', () => {})
  const decoder = new StringDecoder('utf8')
  stdout.on('data', (chunk: Buffer) => { const text = decoder.write(chunk); if (text) handlers.output(text) })

  const inner = new WebSocketHandler(kc, undefined, { stdin, stdout, stderr })
  const safe: WebSocketInterface = { connect: (path, text, binary) => inner.connect(path, guarded(text), guarded(binary)) }
  let exitCode: number | null = null
  let exited = false
  const finish = (reason: string) => {
    if (exited) return
    exited = true
    const rest = decoder.end()
    if (rest) handlers.output(rest)
    handlers.exit(exitCode, reason)
  }

  let conn: Awaited<ReturnType<WebSocketInterface['connect']>>
  try {
    conn = await new Exec(kc, safe).exec(target.namespace, target.pod, target.container, [target.shell], stdout, null, stdin, true, (status) => {
      exitCode = exitCodeOf(status)
    })
  } catch (err) {
    throw new ExecFailed(describeExecFailure(err))
  }
  conn.on('error', () => {})
  conn.on('close', () => finish(exitCode !== null ? 'exited' : 'the connection to the container closed'))

  return {
    input(data) {
      if (!exited) stdin.write(data)
    },
    resize(rows, cols) {
      if (exited || conn.readyState !== conn.OPEN) return
      conn.send(Buffer.concat([Buffer.from([RESIZE_CHANNEL]), Buffer.from(JSON.stringify({ Width: cols, Height: rows }))]))
    },
    close() {
      try { conn.close() } catch { conn.terminate() }
      stdin.end()
    },
  }
}
