// Runs a document's shell blocks the way a reader would, one after the other in one shell, against a
// service and a simulated cluster of its own: a fresh database, a fresh simulator, HOME and the working
// directory fresh temporary directories, `cwo` on PATH, and http://localhost:3000 (what the docs say, and
// cwo's default server) replaced by the service's real address. KUBECONFIG_SIM (and GIT_REPO_URL,
// REGISTRY_URL, REGISTRY_USERNAME, REGISTRY_PASSWORD when the document uses them) as `npm run kube-sim --
// --vars-file` writes them. A failure names the document, the block and the line.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { chmod, copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startTestApp } from '../helpers/app.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { startGitServer } from '../helpers/git-server.ts'
import { startTestRegistry } from '../helpers/test-registry.ts'
import { fencedBlocks, kindOf, type FencedBlock } from './markdown.ts'

type Teardown = { teardown(fn: () => unknown): void }

// What test/kube-sim/cli.ts serves with --git and --registry (the repository `app`, the fixed login), so a
// guide's commands work the same against `npm run kube-sim` and here.
const APP_FILES = {
  Dockerfile: 'FROM nginx:1.27-alpine\nCOPY site /usr/share/nginx/html\n',
  'site/index.html': '<!doctype html>\n<title>hello</title>\n<h1>Hello from a kube-sim build</h1>\n',
}
const REGISTRY_LOGIN = { username: 'builder', password: 'kube-sim' }

export const REPO = fileURLToPath(new URL('../../', import.meta.url))
const CLI_BIN = join(REPO, 'src/cli/bin.ts')
// Resolved here, not by node in the reader's empty working directory, where `--import tsx` finds nothing.
const TSX = import.meta.resolve('tsx')

let bundled: Promise<string> | undefined

/**
 * How the shim starts cwo (`[VAR=value…] exec node …`). The CLI bundled with its packages into one module (by esbuild, the transform
 * tsx itself uses) starts in a tenth of the time `node --import tsx bin.ts` takes (0.1 s against 1 s on
 * the busy 2-core machine), and a guide runs dozens of cwo commands. The bundle sits in a temporary
 * directory with a copy of package.json beside it, where the CLI reads its version (../package.json);
 * CommonJS packages inside an ES module bundle get a `require` of their own. Without esbuild (it comes
 * with tsx), the sources run under tsx.
 */
export function cwoCommand(): Promise<string> {
  bundled ??= (async () => {
    let esbuild: typeof import('esbuild')
    try { esbuild = await import('esbuild') } catch { return `exec ${sh(process.execPath)} --import ${sh(TSX)} ${sh(CLI_BIN)}` }
    const dir = await mkdtemp(join(tmpdir(), 'cwo-docs-bundle-'))
    process.once('exit', () => { try { rmSync(dir, { recursive: true, force: true }) } catch { /* gone already */ } })
    await copyFile(join(REPO, 'package.json'), join(dir, 'package.json'))
    const outfile = join(dir, 'bin', 'cwo.mjs')
    await esbuild.build({
      entryPoints: [CLI_BIN], outfile, bundle: true, platform: 'node', format: 'esm', logLevel: 'error',
      banner: { js: "import { createRequire as __cwoCreateRequire } from 'node:module'; const require = __cwoCreateRequire(import.meta.url);" },
    })
    // Node 22.1+ keeps the compiled bundle between cwo commands (older Nodes ignore the variable).
    return `NODE_COMPILE_CACHE=${sh(join(dir, 'compile-cache'))} exec ${sh(process.execPath)} ${sh(outfile)}`
  })()
  return bundled
}

export interface ScriptLine { text: string; line?: number; block?: number }

/** The runnable blocks in order, each preceded by a marker naming the block's line in the document. */
export function buildScript(blocks: FencedBlock[], address: string): { script: string; origin: ScriptLine[] } {
  const origin: ScriptLine[] = [
    { text: 'set -euo pipefail' },
    // The failing command's script line, for the report (set -e then ends the script).
    { text: 'trap \'printf "%s\\n" "$LINENO" > "$__DOCS_DIR/err-line"\' ERR' },
  ]
  for (const b of blocks.filter((x) => kindOf(x) === 'run')) {
    // Also when each block started, to tell which ones take the time.
    origin.push({ text: `printf '%s\\n' ${b.line} > "$__DOCS_DIR/block"; printf '%s %s\\n' ${b.line} "$EPOCHREALTIME" >> "$__DOCS_DIR/times"`, block: b.line })
    b.body.forEach((text, k) => origin.push({ text: text.replaceAll('http://localhost:3000', address), line: b.line + 1 + k, block: b.line }))
  }
  return { script: origin.map((l) => l.text).join('\n') + '\n', origin }
}

export interface DocumentRun {
  /** Runnable blocks found. */
  blocks: number
  ok: boolean
  exitCode: number | null
  timedOut: boolean
  /** The document line of the block that failed, and of the command when bash could tell. */
  failedBlock?: number
  failedLine?: number
  stdout: string
  stderr: string
  ms: number
  /** One readable paragraph for the test's failure message. */
  report: string
}

export interface RunOptions {
  /** Kills the script (and what it started) after this long. */
  timeoutMs?: number
  /** The name the report uses (defaults to the path relative to the repository). */
  name?: string
}

export async function runDocument(t: Teardown, path: string, options: RunOptions = {}): Promise<DocumentRun> {
  const name = options.name ?? relative(REPO, path)
  const blocks = fencedBlocks(await readFile(path, 'utf8'))
  const runnable = blocks.filter((b) => kindOf(b) === 'run').length
  if (runnable === 0) return { blocks: 0, ok: true, exitCode: 0, timedOut: false, stdout: '', stderr: '', ms: 0, report: `${name}: no runnable blocks` }

  const started = Date.now()
  // A document that uses them gets what `npm run kube-sim -- --git --registry` serves beside the simulator:
  // a Git repository to build and a registry to push to, on plain http (so the service allows insecure
  // servers, as the guide's reader starts it).
  const text = blocks.filter((b) => kindOf(b) === 'run').flatMap((b) => b.body).join('\n')
  const wantsGit = /\bGIT_REPO_URL\b/.test(text)
  const wantsRegistry = /\bREGISTRY_(URL|USERNAME|PASSWORD)\b/.test(text)
  const [{ app }, sim, git, registry] = await Promise.all([
    startTestApp(t, wantsGit || wantsRegistry ? { ALLOW_INSECURE_CLUSTERS: true } : {}),
    startTestCluster(t),
    wantsGit ? startGitServer() : undefined,
    wantsRegistry ? startTestRegistry({ auth: 'basic', ...REGISTRY_LOGIN }) : undefined,
  ])
  if (git) t.teardown(() => git.close())
  if (registry) t.teardown(() => registry.close())
  const gitRepo = git ? await git.addRepo('app', APP_FILES) : undefined
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const setupMs = Date.now() - started

  const root = await mkdtemp(join(tmpdir(), 'cwo-docs-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  const home = await mkdtemp(join(root, 'home-'))
  const cwd = await mkdtemp(join(root, 'cwd-'))
  const bin = await mkdtemp(join(root, 'bin-'))
  const marks = await mkdtemp(join(root, 'marks-'))
  // cwo's own default server is http://localhost:3000, which is the service here: unless the document says
  // otherwise (CWO_SERVER, --server), cwo reaches it as a reader's would reach theirs.
  await writeFile(join(bin, 'cwo'), `#!/bin/sh\nCWO_SERVER="\${CWO_SERVER:-${address}}" ${await cwoCommand()} "$@"\n`)
  await chmod(join(bin, 'cwo'), 0o755)
  const kubeconfig = join(root, 'kubeconfig-sim.yaml')
  await writeFile(kubeconfig, sim.kubeconfigYaml(), { mode: 0o600 })
  const { script, origin } = buildScript(blocks, address)
  const scriptPath = join(root, 'document.sh')
  await writeFile(scriptPath, script)

  // A small, fixed environment: nothing of the developer's (CWO_TOKEN, a stored login, KUBECONFIG) leaks in.
  const env: Record<string, string> = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home, TMPDIR: tmpdir(), LANG: 'C.UTF-8', NO_COLOR: '1', TERM: 'dumb',
    KUBECONFIG_SIM: kubeconfig, __DOCS_DIR: marks,
    ...(gitRepo ? { GIT_REPO_URL: gitRepo.url } : {}),
    ...(registry ? { REGISTRY_URL: registry.url, REGISTRY_USERNAME: registry.username, REGISTRY_PASSWORD: registry.password } : {}),
  }
  const result = await runBash(scriptPath, cwd, env, options.timeoutMs ?? 90_000)
  const ms = Date.now() - started

  const failedBlock = await readNumber(join(marks, 'block'))
  const errLine = await readNumber(join(marks, 'err-line'))
  const failedLine = errLine !== undefined ? origin[errLine - 1]?.line : undefined
  const ok = result.exitCode === 0 && !result.timedOut
  const slowest = await slowestBlocks(join(marks, 'times'), Date.now())
  const where = failedLine !== undefined ? `${name}:${failedLine} (block at line ${failedBlock})` : `${name}, block at line ${failedBlock ?? '?'}`
  const report = ok
    ? `${name}: ${runnable} blocks ran in ${ms - setupMs} ms (starting the service and the simulator: ${setupMs} ms); slowest: ${slowest}`
    : [
        `${where}: ${result.timedOut ? `still running after ${options.timeoutMs ?? 90_000} ms, killed` : `exit code ${result.exitCode}`}`,
        origin[(errLine ?? 0) - 1]?.line !== undefined ? `  command: ${origin[errLine! - 1].text.trim()}` : '',
        '  stderr (last lines):', ...tail(result.stderr, 20).map((l) => `    ${l}`),
        '  stdout (last lines):', ...tail(result.stdout, 8).map((l) => `    ${l}`),
      ].filter(Boolean).join('\n')
  return { blocks: runnable, ok, exitCode: result.exitCode, timedOut: result.timedOut, failedBlock: ok ? undefined : failedBlock, failedLine: ok ? undefined : failedLine, stdout: result.stdout, stderr: result.stderr, ms, report }
}

function runBash(scriptPath: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<{ exitCode: number | null; timedOut: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Its own session (and process group), so a timeout or a block's background job is ended with
    // everything it started.
    const child = spawn('bash', [scriptPath], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s })
    child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s })
    const killGroup = (signal: NodeJS.Signals) => {
      try { process.kill(-child.pid!, signal) } catch { /* already gone */ }
      // GNU timeout moves itself (and what it runs) to a process group of its own; the session stays.
      for (const pid of sessionMembers(child.pid!)) try { process.kill(pid, signal) } catch { /* gone */ }
    }
    const timer = setTimeout(() => { timedOut = true; killGroup('SIGKILL') }, timeoutMs)
    let exitCode: number | null = null
    child.on('error', (err) => { clearTimeout(timer); reject(err) })
    // A background job left running would hold the pipes open: the script's end is the end.
    child.on('exit', (code) => { exitCode = code; clearTimeout(timer); killGroup('SIGKILL') })
    child.on('close', () => resolve({ exitCode, timedOut, stdout, stderr }))
  })
}

/** The processes of session `sid` (Linux /proc; elsewhere none, and the process group kill has to do). */
function sessionMembers(sid: number): number[] {
  let pids: string[]
  try { pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)) } catch { return [] }
  return pids.flatMap((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      // After the command name (which may hold spaces and parentheses): state, ppid, pgrp, session.
      const session = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3])
      return session === sid ? [Number(pid)] : []
    } catch { return [] }
  })
}

/** The three blocks that took longest, as "line 42 3.1 s", from the start times the script wrote. */
async function slowestBlocks(path: string, endMs: number): Promise<string> {
  let text: string
  try { text = await readFile(path, 'utf8') } catch { return 'none' }
  const starts = text.trim().split('\n').map((l) => { const [line, at] = l.split(' '); return { line, at: Number(at) * 1000 } })
  return starts
    .map((b, i) => ({ line: b.line, ms: (starts[i + 1]?.at ?? endMs) - b.at }))
    .sort((a, b) => b.ms - a.ms).slice(0, 3)
    .map((b) => `line ${b.line} ${(b.ms / 1000).toFixed(1)} s`).join(', ')
}

async function readNumber(path: string): Promise<number | undefined> {
  try {
    const n = Number((await readFile(path, 'utf8')).trim())
    return Number.isInteger(n) && n > 0 ? n : undefined
  } catch { return undefined }
}

function tail(text: string, n: number): string[] {
  const lines = text.replace(/\n$/, '').split('\n')
  return text ? lines.slice(-n) : ['(empty)']
}

function sh(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`
}
