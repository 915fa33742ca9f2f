// `npm run kube-sim` as a user runs it: the simulator (and, with --git --registry, a Git repository and a
// registry) come up on loopback, and a signal to npm — what a terminal's Ctrl-C, a process manager or CI
// sends — stops all of it: the node process is gone and every port is free again.
import t from 'tap'
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const root = new URL('../..', import.meta.url).pathname
const run = promisify(execFile)

interface Started { npm: ChildProcess; pid: number; ports: number[]; output: () => string }

/** Starts `npm run kube-sim -- <args>` and resolves once it printed `until` (everything is then listening). */
async function start(args: string[], until: RegExp): Promise<Started> {
  const npm = spawn('npm', ['run', 'kube-sim', '--', ...args], { cwd: root, env: { ...process.env, KUBE_SIM_FAST: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  npm.stderr!.on('data', (c: Buffer) => { out += c.toString() })
  await new Promise<void>((resolve, reject) => {
    npm.stdout!.on('data', (c: Buffer) => { out += c.toString(); if (until.test(out)) resolve() })
    npm.once('exit', (code) => reject(new Error(`npm exited (${code}) before it was ready:\n${out}`)))
  })
  const pid = Number(/kube-sim listening on \S+ \(pid (\d+)\)/.exec(out)?.[1])
  const ports = [...out.matchAll(/(?:https?:\/\/)?127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]))
  return { npm, pid, ports: [...new Set(ports)], output: () => out }
}

const alive = (pid: number) => { try { process.kill(pid, 0); return true } catch { return false } }
const canListen = async (port: number) => {
  const srv = createServer()
  try {
    srv.listen(port, '127.0.0.1')
    await once(srv, 'listening')
    return true
  } catch {
    return false
  } finally {
    await new Promise((resolve) => srv.close(resolve))
  }
}

t.test('SIGTERM to npm stops the simulator, its Git server and registry, and removes the variables file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kube-sim-cli-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const vars = join(dir, 'kube-sim.env')
  const sim = await start(['--git', '--registry', '--vars-file', vars], /^variables: /m)
  t.teardown(() => { if (alive(sim.pid)) process.kill(sim.pid, 'SIGKILL') })
  t.ok(sim.pid > 0 && sim.pid !== sim.npm.pid, `the simulator runs as its own process (pid ${sim.pid}, npm ${sim.npm.pid})`)
  t.equal(sim.ports.length, 3, 'three servers: the simulator, the Git server, the registry')

  // What it printed works: the variables are shell-sourceable, the repository clones, the login is taken.
  const { stdout } = await run('bash', ['-c', `. '${vars}' && git ls-remote "$GIT_REPO_URL" && curl -s -o /dev/null -w '%{http_code} ' "$REGISTRY_URL/v2/" && curl -s -o /dev/null -w '%{http_code} ' -u "$REGISTRY_USERNAME:$REGISTRY_PASSWORD" "$REGISTRY_URL/v2/" && kubectl --kubeconfig "$KUBECONFIG_SIM" get nodes -o name`], { timeout: 30_000 })
  t.match(stdout, /refs\/heads\/main/, 'the repository answers git')
  t.match(stdout, /401 200 /, 'the registry wants the printed login, and takes it')
  t.match(stdout, /node\/kube-sim-node-/, 'kubectl reaches the simulator')
  for (const port of sim.ports) t.notOk(await canListen(port), `port ${port} is in use while it runs`)

  sim.npm.kill('SIGTERM')
  const [code, signal] = await once(sim.npm, 'exit')
  t.ok(code === 0 || signal === 'SIGTERM', `npm ended (code ${code}, signal ${signal})`)
  t.notOk(alive(sim.pid), 'the simulator process is gone')
  for (const port of sim.ports) t.ok(await canListen(port), `port ${port} is free`)
  t.notOk(existsSync(vars), 'the variables file is removed')
})

t.test('SIGINT (Ctrl-C) to npm stops a plain simulator', async (t) => {
  const sim = await start([], /^service-account kubeconfig: /m)
  t.teardown(() => { if (alive(sim.pid)) process.kill(sim.pid, 'SIGKILL') })
  const kubeconfig = /^kubeconfig: (\S+)/m.exec(sim.output())![1]
  t.match(readFileSync(kubeconfig, 'utf8'), /server: https:\/\/127\.0\.0\.1:/)
  t.equal(sim.ports.length, 1)
  sim.npm.kill('SIGINT')
  await once(sim.npm, 'exit')
  t.notOk(alive(sim.pid), 'the simulator process is gone')
  t.ok(await canListen(sim.ports[0]), 'its port is free')
  t.notOk(existsSync(kubeconfig), 'its kubeconfig files are removed')
})

t.test('an unknown flag is refused with the usage, before anything listens', async (t) => {
  const npm = spawn('npm', ['run', '--silent', 'kube-sim', '--', '--gti'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  npm.stderr!.on('data', (c: Buffer) => { err += c.toString() })
  const [code] = await once(npm, 'exit')
  t.not(code, 0)
  t.match(err, /Unknown option '--gti'/)
  t.match(err, /usage: npm run kube-sim -- \[--git\]/)
})
