import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import type { ObjectApi } from './api.ts'
import type { Kubelet } from './controllers/kubelet.ts'
import { containerEnv } from './container-env.ts'
import type { Registry } from './registry.ts'
import { parseTarget } from './rest.ts'
import { ApiError, badRequest } from './status.ts'
import { ExitSignal, Shell, type ShellIo, type ShellState } from './shell.ts'
import type { JsonObject, KObject } from './util.ts'

// `pods/exec` over WebSocket, the remotecommand protocol kubectl (1.31+) and client-node speak:
// binary frames whose first byte is the channel — 0 stdin, 1 stdout, 2 stderr, 3 status (a JSON
// metav1.Status), 4 resize (JSON {Width,Height}); v5 adds 255 "close stream" (payload: channel).

const supported = ['v5.channel.k8s.io', 'v4.channel.k8s.io']

const CH = { stdin: 0, stdout: 1, stderr: 2, status: 3, resize: 4, close: 255 } as const

function exitStatus(code: number, argv: string[]): JsonObject {
  if (code === 0) return { metadata: {}, status: 'Success' }
  return {
    metadata: {}, status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${argv.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  }
}

export class ExecService {
  private readonly wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => supported.find((p) => protocols.has(p)) ?? false,
  })
  private readonly sessions = new Set<WebSocket>()

  constructor(private readonly api: ObjectApi, private readonly registry: Registry, private readonly kubelet: Kubelet, private readonly caPem: string) {}

  closeAll(): void {
    for (const ws of [...this.sessions]) ws.terminate()
    this.sessions.clear()
  }

  close(): void { this.closeAll(); this.wss.close() }

  /** Validates the request like the apiserver does before upgrading, then runs the session. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'https://sim')
    const t = parseTarget(this.registry, url.pathname.split('/').filter(Boolean))
    if (!t || t === 'discovery' || t.rt.plural !== 'pods' || t.rt.group !== '' || (t.subresource !== 'exec' && t.subresource !== 'attach')) {
      throw new ApiError(404, 'the server could not find the requested resource', 'NotFound')
    }
    if (t.subresource === 'attach') throw badRequest('attach is not supported by kube-sim')
    const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((s) => s.trim())
    if (!offered.some((p) => supported.includes(p))) throw badRequest(`kube-sim supports only the ${supported.join(', ')} exec protocols over WebSocket (offered: ${offered.join(', ') || 'none'})`)
    const pod = this.api.get(t.rt, t.namespace, t.name!)
    const q = url.searchParams
    const names = ((pod.spec?.containers ?? []) as JsonObject[]).map((c) => c.name as string)
    const container = q.get('container') || (names.length === 1 ? names[0] : undefined)
    if (!container) throw badRequest(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [${names.join(' ')}]`)
    if (!names.includes(container)) throw badRequest(`container ${container} is not valid for pod ${pod.metadata.name}`)
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') throw badRequest(`cannot exec into a container in a completed pod; current phase is ${pod.status.phase}`)
    const rc = this.kubelet.container(pod.metadata.uid!, container)
    if (!rc || rc.stage !== 'running') throw badRequest(`unable to upgrade connection: container not found ("${container}")`)
    const argv = q.getAll('command')
    if (!argv.length) throw badRequest('you must specify at least 1 command')
    const opts = { stdin: q.get('stdin') === 'true' || q.get('stdin') === '1', tty: q.get('tty') === 'true' || q.get('tty') === '1', stderr: q.get('stderr') !== 'false' && q.get('stderr') !== '0' }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.session(ws, pod, container, argv, opts))
  }

  private state(pod: KObject, container: string): ShellState {
    const spec = ((pod.spec?.containers ?? []) as JsonObject[]).find((c) => c.name === container) ?? {}
    const ns = pod.metadata.namespace!
    const cm = (name: string) => this.api.tryGet(this.registry.byGroupPlural('', 'configmaps')!, ns, name)
    const secret = (name: string) => this.api.tryGet(this.registry.byGroupPlural('', 'secrets')!, ns, name)
    const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8')
    const env = containerEnv({ configMap: cm, secret }, pod, spec)
    const files = new Map<string, string>([
      ['/etc/hostname', `${pod.metadata.name}\n`],
      ['/etc/hosts', `127.0.0.1\tlocalhost\n${pod.status?.podIP ?? '10.244.0.2'}\t${pod.metadata.name}\n`],
      ['/etc/os-release', 'NAME="kube-sim"\nID=kube-sim\nPRETTY_NAME="kube-sim simulated container"\n'],
      ['/etc/resolv.conf', `search ${ns}.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n`],
      ['/var/run/secrets/kubernetes.io/serviceaccount/namespace', ns],
      ['/var/run/secrets/kubernetes.io/serviceaccount/ca.crt', this.caPem],
    ])
    const dirs = new Set(['/bin', '/dev', '/etc', '/home', '/proc', '/root', '/tmp', '/usr', '/var', '/usr/bin', '/usr/local/bin'])
    const volumes = (pod.spec?.volumes ?? []) as JsonObject[]
    for (const m of (spec.volumeMounts ?? []) as JsonObject[]) {
      dirs.add(m.mountPath)
      const v = volumes.find((x) => x.name === m.name)
      let data: Record<string, string> = {}
      let items: JsonObject[] | undefined
      if (v?.configMap) { data = { ...(cm(v.configMap.name)?.data ?? {}) }; items = v.configMap.items }
      if (v?.secret) { data = Object.fromEntries(Object.entries((secret(v.secret.secretName)?.data ?? {}) as Record<string, string>).map(([k, x]) => [k, b64(x)])); items = v.secret.items }
      if (m.subPath) { if (data[m.subPath] !== undefined) { files.set(m.mountPath, data[m.subPath]); dirs.delete(m.mountPath) } continue }
      const entries = items ? items.filter((it) => data[it.key] !== undefined).map((it) => [it.path, data[it.key]] as const) : Object.entries(data)
      for (const [k, x] of entries) files.set(`${m.mountPath.replace(/\/$/, '')}/${k}`, x)
    }
    return { env, cwd: spec.workingDir ?? '/', hostname: pod.metadata.name!, files, dirs }
  }

  private session(ws: WebSocket, pod: KObject, container: string, argv: string[], o: { stdin: boolean; tty: boolean; stderr: boolean }): void {
    this.sessions.add(ws)
    const send = (ch: number, data: string | Buffer) => {
      if (ws.readyState !== ws.OPEN) return
      const payload = typeof data === 'string' ? Buffer.from(data) : data
      ws.send(Buffer.concat([Buffer.from([ch]), payload]))
    }
    // A TTY turns \n into \r\n and merges stderr into the terminal (stdout).
    const term = (s: string) => (o.tty ? s.replace(/\r?\n/g, '\r\n') : s)
    const io: ShellIo = {
      out: (s) => send(CH.stdout, term(s)),
      err: (s) => send(o.tty || !o.stderr ? CH.stdout : CH.stderr, term(s)),
    }
    let finished = false
    const finish = (code: number) => {
      if (finished) return
      finished = true
      send(CH.status, JSON.stringify(exitStatus(code, argv)))
      ws.close(1000)
    }
    ws.on('close', () => { this.sessions.delete(ws); finished = true })
    ws.on('error', () => { this.sessions.delete(ws) })

    const shell = new Shell(this.state(pod, container))
    const prog = argv[0].split('/').pop()!
    const interactive = (prog === 'sh' || prog === 'bash' || prog === 'ash') && argv.length === 1
    const catStdin = prog === 'cat' && argv.length === 1 && o.stdin

    if (!interactive && !catStdin) {
      let code: number
      try { code = shell.run(argv.map(quote).join(' '), io) } catch (e) { if (e instanceof ExitSignal) code = e.code; else throw e }
      // Leave the client's stdin frames (if any) unread; the command does not consume them.
      finish(code)
      return
    }

    let line = ''
    const prompt = () => { if (o.tty) send(CH.stdout, '# ') }
    if (interactive) prompt()
    const onInput = (text: string) => {
      if (catStdin) { io.out(text); return }
      for (const ch of text) {
        if (o.tty && (ch === '\x7f' || ch === '\b')) { if (line) { line = line.slice(0, -1); send(CH.stdout, '\b \b') } continue }
        if (o.tty && ch === '\x03') { send(CH.stdout, '^C\r\n'); line = ''; prompt(); continue }
        if (o.tty && ch === '\x04') { if (!line) { finish(shell.last); return } continue }
        if (ch === '\r' || ch === '\n') {
          if (o.tty) send(CH.stdout, '\r\n')
          const cmd = line
          line = ''
          try { shell.run(cmd, io) } catch (e) { if (e instanceof ExitSignal) { finish(e.code); return } throw e }
          prompt()
          continue
        }
        line += ch
        if (o.tty) send(CH.stdout, ch)
      }
    }
    const endOfInput = () => {
      if (line && !catStdin) { try { shell.run(line, io) } catch (e) { if (e instanceof ExitSignal) { finish(e.code); return } throw e } }
      finish(catStdin ? 0 : shell.last)
    }
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (finished) return
      const buf = isBinary ? data : Buffer.from(data.toString())
      if (!buf.length) return
      const ch = buf[0]
      const payload = buf.subarray(1)
      if (ch === CH.stdin) onInput(payload.toString('utf8'))
      else if (ch === CH.close && payload[0] === CH.stdin) endOfInput()
      // Resize (4) is accepted and ignored: output is not laid out to a terminal width.
    })
    if (!o.stdin) endOfInput()
  }
}

/** Re-quotes an argv so the shell sees each argument as one word. */
function quote(a: string): string {
  return /^[A-Za-z0-9_\-./=:,@%+]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`
}

