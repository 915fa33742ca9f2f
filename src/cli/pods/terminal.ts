// Runs one command through the service's terminal WebSocket. The route opens an interactive shell with a
// TTY (there is no exec of an argv), so the command is typed into it: echo off where stty exists, a marker
// whose echoed form differs from its printed form (quotes split it), the command, then `exit $?` so the
// shell's exit code, which the server reports in its `close` message, is the command's.
import { randomBytes } from 'node:crypto'
import WebSocket from 'ws'
import { apiError, unreachable } from '../client.ts'
import { CliError, EXIT } from '../errors.ts'
import type { Session } from '../session.ts'
import type { TerminalMessage } from '../follow/events.ts'

export interface TerminalRun {
  argv: string[]
  container?: string
  pod?: string
  /** Typed after the command line, then end-of-input (Ctrl-D): what the command reads. */
  stdin?: string
  signal: AbortSignal
  /** The command's output (the TTY merges stderr into it), with the terminal's \r\n turned into \n. */
  output: (text: string) => void
  /** The server's `error` messages during a session that still ran (a refusal ends it as a CliError instead). */
  error: (message: string) => void
}

/** One shell word, quoted only when it must be. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_\-./=:,@%+]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}

/** The line typed into the shell, and the marker its output starts after. */
export function commandLine(argv: string[], nonce: string): { line: string; marker: string } {
  const marker = `__cwo_start_${nonce}`
  const echoed = `__cwo_'s'tart_${nonce}`
  return { line: `stty -echo 2>/dev/null; echo ${echoed}; ${argv.map(shellQuote).join(' ')}; exit $?\r`, marker }
}

// Frames are limited to 64 KiB; JSON escaping can double a character, and UTF-8 takes up to 4 bytes.
const INPUT_CHUNK = 8 * 1024

/** The command's exit code as the server reported it; refusals and lost sessions become CliErrors. */
export function runInTerminal(s: Session, resourceId: string, o: TerminalRun): Promise<number> {
  const url = new URL(`${s.server}/v1/api/resources/${encodeURIComponent(resourceId)}/exec/terminal`)
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
  url.searchParams.set('shell', 'sh')
  if (o.container) url.searchParams.set('container', o.container)
  if (o.pod) url.searchParams.set('pod', o.pod)
  const { line, marker } = commandLine(o.argv, randomBytes(6).toString('hex'))

  return new Promise<number>((resolve, reject) => {
    // The token goes in the Authorization header (the route takes it there too), never in the URL.
    const ws = new WebSocket(url, { headers: { 'user-agent': 'cwo', ...(s.token && { authorization: `Bearer ${s.token}` }) } })
    let settled = false
    const settle = (fn: () => void) => { if (!settled) { settled = true; o.signal.removeEventListener('abort', onAbort); fn() } }
    const onAbort = () => { settle(() => reject(new CliError('interrupted', EXIT.interrupted))); ws.terminate() }
    o.signal.addEventListener('abort', onAbort, { once: true })
    if (o.signal.aborted) return onAbort()

    let before = ''
    let started = false
    let pendingCR = false
    let exit: Extract<TerminalMessage, { type: 'close' }>['data'] | undefined
    const errors: string[] = []
    const emit = (text: string) => {
      let t = (pendingCR ? '\r' : '') + text
      pendingCR = t.endsWith('\r')
      if (pendingCR) t = t.slice(0, -1)
      t = t.replace(/\r\n/g, '\n')
      if (t) o.output(t)
    }
    const send = (frame: object) => { if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame)) }

    ws.on('unexpected-response', (req, res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (c: string) => { body += c }).on('end', () => {
        let parsed: unknown = body
        try { parsed = JSON.parse(body) } catch { /* the text itself */ }
        settle(() => reject(apiError(res.statusCode ?? 0, parsed)))
        req.destroy()
      })
    })
    ws.on('error', (err) => settle(() => reject(unreachable(s.server, err))))
    ws.on('message', (data) => {
      let frame: TerminalMessage
      try { frame = JSON.parse(String(data)) } catch { return }
      if (frame.type === 'metadata') {
        send({ type: 'input', data: line })
        if (o.stdin !== undefined) {
          for (let i = 0; i < o.stdin.length; i += INPUT_CHUNK) send({ type: 'input', data: o.stdin.slice(i, i + INPUT_CHUNK) })
          // Ctrl-D ends input at the start of a line; a last line without its newline needs a second one.
          send({ type: 'input', data: o.stdin === '' || o.stdin.endsWith('\n') ? '\x04' : '\x04\x04' })
        }
      } else if (frame.type === 'output') {
        if (started) return emit(frame.data)
        before += frame.data
        const at = before.indexOf(marker)
        if (at < 0) return
        const rest = before.slice(at + marker.length).replace(/^\r?\n/, '')
        started = true
        before = ''
        if (rest) emit(rest)
      } else if (frame.type === 'error') errors.push(frame.data)
      else if (frame.type === 'close') exit = frame.data
    })
    ws.on('close', () => {
      if (pendingCR) { pendingCR = false; o.output('\r') }
      if (exit?.exit_code !== null && exit?.exit_code !== undefined) {
        const code = exit.exit_code
        for (const e of errors) o.error(e)
        return settle(() => resolve(code))
      }
      // A refusal (not found, viewer only, too many terminals) says why in its error message.
      const why = errors.length ? errors.join('; ') : `the terminal session ended without an exit code (${exit?.reason ?? 'the connection closed'})`
      settle(() => reject(new CliError(why === 'resource not found' ? `404: ${why}` : why)))
    })
  })
}
