// The data directory's LOCK between real processes: racers on a stale lock end with exactly one owner,
// and a lock held by a live process is refused with a message naming the pid and what to do about it.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface, type Interface } from 'node:readline'
import t, { type Test } from 'tap'
import { startEmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'
import { lockDataDirectory } from '../../src/embedded-mongo/storage/dir-lock.ts'

const racer = join(import.meta.dirname, 'lock-racer.ts')
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined }

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-mongo-lock-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** The pid of a process that has exited: what a crashed server leaves in LOCK. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  await once(child, 'exit')
  return child.pid!
}

/** A live process that is not a database server (a pid reused by something unrelated). */
async function bystander(t: Test): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] })
  await once(child, 'spawn')
  t.teardown(() => { child.kill('SIGKILL') })
  return child
}

interface Racer { child: ChildProcess; lines: Interface; exited: Promise<unknown[]> }

async function startRacer(t: Test, dir: string): Promise<Racer> {
  const child = spawn(process.execPath, ['--import', 'tsx', racer, dir], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = once(child, 'exit')
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const lines = createInterface({ input: child.stdout! })
  const [ready] = (await once(lines, 'line')) as [string]
  if (ready !== 'ready') throw new Error(`racer said ${ready}`)
  return { child, lines, exited }
}

const TRIALS = 4
const RACERS = 8

for (let trial = 1; trial <= TRIALS; trial++) {
  t.test(`trial ${trial}: ${RACERS} processes starting at once on a stale LOCK: exactly one gets it`, async (t) => {
    const dir = await tempDir(t)
    const stale = await deadPid()
    await writeFile(join(dir, 'LOCK'), String(stale))
    // Booting is slow and uneven; the race starts only once every racer waits at the line.
    const racers = await Promise.all(Array.from({ length: RACERS }, () => startRacer(t, dir)))
    const outcomes = racers.map((r) => once(r.lines, 'line'))
    for (const r of racers) r.child.stdin!.write('go\n')
    const results = (await Promise.all(outcomes)).map(([line]) => JSON.parse(line as string) as { pid: number; locked: boolean; error?: string })
    const winners = results.filter((r) => r.locked)
    t.equal(winners.length, 1, `one owner (got ${winners.length})`)
    const winner = winners[0]?.pid
    t.equal(Number(await readFile(join(dir, 'LOCK'), 'utf8')), winner, 'LOCK names the owner')
    for (const loser of results.filter((r) => !r.locked)) {
      t.match(loser.error, `is locked by pid ${winner} `, 'each other racer is told who holds it')
    }
    for (const r of racers) r.child.stdin!.end()
    await Promise.all(racers.map((r) => r.exited))
    t.same((await readdir(dir)).filter((f) => f !== 'LOCK'), [], 'no helper files are left behind')
  })
}

t.test('a lock held by a live process that is not a server: the error names the pid and how to check it', async (t) => {
  const dir = await tempDir(t)
  const other = await bystander(t)
  await writeFile(join(dir, 'LOCK'), String(other.pid))
  const err = await startEmbeddedMongoServer({ storage: 'disk', dataDir: dir, logger: quiet }).catch((e: unknown) => e as Error)
  t.match(err, { name: 'DataDirectoryInUseError', pid: other.pid })
  const lock = join(dir, 'LOCK')
  t.match((err as Error).message, new RegExp(
    `^data directory ${dir} is locked by pid ${other.pid} \\(since \\d{4}-\\d\\d-\\d\\dT[^)]+\\); ` +
    `if no database server is running there, check with \`ps -p ${other.pid}\` and remove ${lock}$`,
  ))
  t.equal(Number(await readFile(lock, 'utf8')), other.pid, 'the lock is left alone')

  other.kill('SIGKILL')
  await once(other, 'exit')
  const release = await lockDataDirectory(dir)
  t.equal(Number(await readFile(lock, 'utf8')), process.pid, 'once that process is gone, the lock is taken over')
  await release()
  t.same(await readdir(dir), [])
})

t.test('a breaker that died while removing a stale lock blocks no one', async (t) => {
  const dir = await tempDir(t)
  const lock = join(dir, 'LOCK')
  const owner = await deadPid()
  await writeFile(lock, String(owner))
  const st = await stat(lock, { bigint: true })
  // What a process killed between winning the right to break this LOCK and removing it leaves behind.
  await writeFile(join(dir, `LOCK.break-${st.ino}-${st.mtimeNs}-${owner}.1`), String(await deadPid()))
  const release = await lockDataDirectory(dir)
  t.equal(Number(await readFile(lock, 'utf8')), process.pid)
  t.same(await readdir(dir), ['LOCK'], 'the leftover is cleaned up by the new owner')
  await release()
})
