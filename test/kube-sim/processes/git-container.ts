import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import type { RunContext } from './engine.ts'

// A container of the git image (alpine/git: entrypoint `git`) runs the machine's real `git` with the
// container's arguments and environment, paths mapped into the pod's sandbox. So a wrong URL, branch,
// commit or credential fails exactly as it would in the cluster — git's own message, exit code 128.
// The simulated cluster has no route off this machine: URLs naming other hosts fail to resolve, as they
// would on a cluster without outbound DNS, instead of reaching the internet from a test.

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1'])

function offMachineHost(arg: string): { url: string; host: string; ssh: boolean } | undefined {
  const m = /^(https?|git|ssh):\/\/(?:[^@/]*@)?(\[[^\]]+\]|[^:/]+)/i.exec(arg)
  if (m) return LOOPBACK.has(m[2].toLowerCase()) ? undefined : { url: arg, host: m[2], ssh: m[1].toLowerCase() !== 'http' && m[1].toLowerCase() !== 'https' }
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)/.exec(arg)
  if (scp && !arg.startsWith('/') && scp[1].includes('.')) return LOOPBACK.has(scp[1]) ? undefined : { url: arg, host: scp[1], ssh: true }
  return undefined
}

export async function runGit(ctx: RunContext): Promise<number> {
  const command = (ctx.spec.command ?? []) as string[]
  if (command.length && !/(^|\/)git$/.test(command[0])) {
    ctx.out.line(`kube-sim: a simulated git container runs only git (command ${JSON.stringify(command)})`)
    return 126
  }
  const args = [...command.slice(1), ...((ctx.spec.args ?? []) as string[])]
  if (args.includes('fetch') || args.includes('clone')) {
    await ctx.enter('clone')
    if (ctx.signal.aborted) return 137
  }
  for (const a of args) {
    const off = offMachineHost(a)
    if (!off) continue
    if (off.ssh) ctx.out.line(`ssh: Could not resolve hostname ${off.host}: Name or service not known\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.`)
    else ctx.out.line(`fatal: unable to access '${off.url.replace(/\/?$/, '/')}': Could not resolve host: ${off.host}`)
    return 128
  }
  const mapped = args.map((a) => {
    if (a.startsWith('/')) return ctx.paths.toHost(a)
    const eq = /^(--[\w-]+=)(\/.*)$/.exec(a)
    return eq ? eq[1] + ctx.paths.toHost(eq[2]) : a
  })
  const env = { ...ctx.env, HOME: ctx.paths.toHost(ctx.env.HOME ?? '/root'), GIT_CONFIG_NOSYSTEM: '1' }
  return new Promise<number>((resolve) => {
    // detached: the process has no controlling terminal (as in a container without a TTY, so credential
    // prompts fail the way they do there) and is its own process group, which a kill takes down whole.
    const child = spawn('git', mapped, { cwd: ctx.paths.workingDir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const kill = () => { try { if (child.pid) process.kill(-child.pid, 'SIGKILL') } catch { /* already gone */ } }
    ctx.signal.addEventListener('abort', kill, { once: true })
    const write = (b: Buffer) => ctx.out.write(ctx.paths.toContainer(b.toString('utf8')))
    child.stdout.on('data', write)
    child.stderr.on('data', write)
    child.on('error', (e) => { ctx.out.line(`exec: "git": ${e.message}`); resolve(127) })
    child.on('close', (code, signal) => {
      ctx.signal.removeEventListener('abort', kill)
      resolve(signal ? 128 + (constants.signals[signal] ?? 9) : code ?? 1)
    })
  })
}
