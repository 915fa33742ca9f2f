// The world a `cwo` test runs in: the real service listening on a port, a simulated cluster registered in
// it, a user, and `cwo` itself, run in-process (runCli with captured streams: fast) or as a real process
// (bin.ts under tsx: signals, stdin, exit codes). Nothing is mocked: every command talks HTTP to the
// service, which talks to the simulator.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { simClusterBody, startTestCluster } from '../helpers/kube.ts'
import type { KubeSim, KubeSimOptions } from '../kube-sim/index.ts'
import { runCli } from '../../src/cli/program.ts'

type Teardown = { teardown(fn: () => unknown): void }

export interface CliResult { code: number; stdout: string; stderr: string }
export interface CliRunOptions {
  /** Text piped to stdin. */
  stdin?: string
  /** More environment (replaces the world's CWO_* defaults where it names them). */
  env?: Record<string, string | undefined>
  /** Aborting it is Ctrl-C. */
  signal?: AbortSignal
  cwd?: string
  /** Called with each chunk written to stdout (to act while a follower runs). */
  onStdout?: (text: string) => void
}

export interface CliWorld {
  app: TestApp
  sim: KubeSim
  /** The service's base URL (http://127.0.0.1:PORT). */
  server: string
  user: TestUser
  /** The simulated cluster's name in the service (the user's default cluster). */
  cluster: string
  /** A fresh directory for this test file (config, workflow files). */
  dir: string
  /** The environment every run gets: its own config file, the server, the user's token. */
  env: Record<string, string>
  cwo(args: string[], o?: CliRunOptions): Promise<CliResult>
  cwoProcess(args: string[], o?: CliRunOptions): Promise<CliResult>
}

const BIN = fileURLToPath(new URL('../../src/cli/bin.ts', import.meta.url))

export async function startCliWorld(t: Teardown, sim?: KubeSimOptions, config: Parameters<typeof startTestApp>[1] = {}): Promise<CliWorld> {
  const app = await startTestApp(t, config)
  const address = await app.app.listen({ port: 0, host: '127.0.0.1' })
  const cluster = await startTestCluster(t, sim)
  const user = await registerUser(app.app)
  const res = await app.app.inject({ method: 'POST', url: '/v1/api/clusters', headers: user.headers, payload: simClusterBody(cluster, 'sim') })
  if (res.statusCode !== 201) throw new Error(`registering the simulator: ${res.statusCode} ${res.body}`)
  const dir = await mkdtemp(join(tmpdir(), 'cwo-test-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const env = { CWO_CONFIG: join(dir, 'config.json'), CWO_SERVER: address, CWO_TOKEN: user.token, HOME: dir, NO_COLOR: '1' }

  const cwo = async (args: string[], o: CliRunOptions = {}): Promise<CliResult> => {
    let stdout = ''
    let stderr = ''
    const code = await runCli(args, {
      stdout: { write: (s: string) => { stdout += s; o.onStdout?.(s); return true } },
      stderr: { write: (s: string) => { stderr += s; return true } },
      stdin: o.stdin !== undefined ? Readable.from([o.stdin]) : new PassThrough(),
      env: withoutUndefined({ ...env, ...o.env }),
      cwd: o.cwd ?? dir,
      signal: o.signal ?? new AbortController().signal,
      isTTY: false,
    })
    return { code, stdout, stderr }
  }

  const cwoProcess = (args: string[], o: CliRunOptions = {}): Promise<CliResult> => new Promise((resolve, reject) => {
    // tsx by its resolved URL: the child's working directory (a temporary one) has no node_modules.
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), BIN, ...args], {
      cwd: o.cwd ?? dir,
      env: withoutUndefined({ PATH: process.env.PATH, ...env, ...o.env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; o.onStdout?.(s) })
    child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s })
    o.signal?.addEventListener('abort', () => child.kill('SIGINT'), { once: true })
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }))
    child.stdin.end(o.stdin ?? '')
  })

  return { app, sim: cluster, server: address, user, cluster: 'sim', dir, env, cwo, cwoProcess }
}

function withoutUndefined(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
}
