// `npm run embedded-db` as an operator meets it: start-up failures an operator can fix end the process
// with exit code 1 and one line on stderr (what failed, and what to do), never a stack trace.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { appendFile, chmod, mkdir, mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'

const cli = join(import.meta.dirname, '../../src/embedded-mongo/cli.ts')
const NOBODY = 65534

interface Outcome { code: number | null; stdout: string; stderrLines: string[] }

/** Runs the CLI until it exits (it exits by itself on a start-up failure). */
async function runCli(env: Record<string, string>, as?: { uid: number; gid: number }): Promise<Outcome> {
  // Without tap's NODE_OPTIONS (which tap adds to every child it sees spawned): its exit hook writes
  // tap's own files, which another user cannot, and would add its own stack to stderr.
  const child = spawn('env', ['-u', 'NODE_OPTIONS', process.execPath, '--import', 'tsx', cli], {
    cwd: join(import.meta.dirname, '../..'),
    env: { PATH: process.env.PATH ?? '', EMBEDDED_DB: 'disk', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...as,
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => { stdout += d })
  child.stderr!.on('data', (d) => { stderr += d })
  const [code] = (await once(child, 'exit')) as [number | null]
  // A start that succeeded would print its URI and keep running: not what these cases expect.
  if (code === null) throw new Error(`the CLI was killed: ${stderr}`)
  return { code, stdout, stderrLines: stderr.split('\n').filter((l) => l !== '') }
}

function expectOneLine(t: Test, out: Outcome, pattern: RegExp): void {
  t.equal(out.code, 1, 'exit code 1')
  t.equal(out.stdout, '', 'no URI')
  t.equal(out.stderrLines.length, 1, `one line on stderr (got: ${out.stderrLines.join(' | ')})`)
  t.match(out.stderrLines[0], pattern)
  t.notMatch(out.stderrLines.join('\n'), /\n\s+at |node:internal/, 'no stack trace')
}

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-mongo-cli-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** As root: whether uid nobody can load the CLI from this checkout at all (a clone under a private home cannot). */
async function nobodyCanRun(): Promise<true | string> {
  const child = spawn('env', ['-u', 'NODE_OPTIONS', process.execPath, '--import', 'tsx', '-e', '0'], {
    cwd: join(import.meta.dirname, '../..'), env: { PATH: process.env.PATH ?? '' }, stdio: 'ignore', uid: NOBODY, gid: NOBODY,
  })
  const [code] = (await once(child, 'exit')) as [number | null]
  return code === 0 || `uid ${NOBODY} cannot run node from this checkout (exit ${code}), so root cannot be made to meet EACCES here`
}
const asNobody = process.getuid?.() === 0 ? await nobodyCanRun() : true

t.test('a data directory this user cannot create files in (EACCES)', { skip: asNobody === true ? false : asNobody }, async (t) => {
  // chmod does not stop root, so as root the CLI runs as nobody (uid 65534) against a directory root owns
  // with mode 0700; as anyone else the directory is made read-only for its owner.
  const parent = await tempDir(t)
  const root = process.getuid?.() === 0
  const dataDir = join(parent, 'data')
  if (root) {
    await chmod(parent, 0o700)
  } else {
    await chmod(parent, 0o500)
    t.teardown(() => chmod(parent, 0o700))
  }
  const out = await runCli({ DATA_DIR: dataDir }, root ? { uid: NOBODY, gid: NOBODY } : undefined)
  const uid = root ? NOBODY : process.getuid!()
  expectOneLine(t, out, new RegExp(`^\\[error\\] could not start: EACCES: permission denied, mkdir '${dataDir}': DATA_DIR \\(${dataDir}\\) must be a directory this user \\(uid ${uid}\\) can create files in$`))
})

t.test('a data directory whose path runs through a regular file (ENOTDIR)', async (t) => {
  const parent = await tempDir(t)
  await writeFile(join(parent, 'file'), 'not a directory')
  const dataDir = join(parent, 'file', 'data')
  const out = await runCli({ DATA_DIR: dataDir })
  expectOneLine(t, out, new RegExp(`^\\[error\\] could not start: ENOTDIR: .*: DATA_DIR \\(${dataDir}\\) must be a directory, and every part of its path too$`))
})

t.test('a data directory locked by a live process', async (t) => {
  const dataDir = await tempDir(t)
  const other = spawn(process.execPath, ['-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] }) as ChildProcess
  await once(other, 'spawn')
  t.teardown(() => { other.kill('SIGKILL') })
  await writeFile(join(dataDir, 'LOCK'), String(other.pid))
  const out = await runCli({ DATA_DIR: dataDir })
  expectOneLine(t, out, new RegExp(`^\\[error\\] data directory ${dataDir} is locked by pid ${other.pid} \\(since [^)]+\\); if no database server is running there, check with \`ps -p ${other.pid}\` and remove ${dataDir}/LOCK$`))
})

const run = promisify(execFile)

/** A tmpfs with no free page left, or why there cannot be one here. */
async function fullFilesystem(): Promise<string | { mnt: string }> {
  if (process.platform !== 'linux') return 'mounting a tmpfs needs Linux'
  const mnt = await mkdtemp(join(tmpdir(), 'embedded-mongo-cli-full-'))
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0755', 'tmpfs', mnt])
  } catch (err) {
    await rmdir(mnt)
    return `cannot mount a tmpfs here (${String((err as { stderr?: string }).stderr ?? (err as Error).message).trim()})`
  }
  t.teardown(async () => { await run('umount', [mnt]); await rmdir(mnt) })
  await mkdir(join(mnt, 'data'))
  for (;;) {
    try {
      await appendFile(join(mnt, 'filler'), Buffer.alloc(4096))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break
      throw err
    }
  }
  return { mnt }
}

const full = await fullFilesystem()

t.test('a data directory on a full disk (ENOSPC)', { skip: typeof full === 'string' ? full : false }, async (t) => {
  if (typeof full === 'string') return
  const dataDir = join(full.mnt, 'data')
  const out = await runCli({ DATA_DIR: dataDir })
  expectOneLine(t, out, new RegExp(`^\\[error\\] could not start: ENOSPC: .*: the disk holding DATA_DIR \\(${dataDir}\\) is full; free some space and start again$`))
})
