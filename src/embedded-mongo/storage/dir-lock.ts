// LOCK: the pid of the process that owns a data directory, so two processes (two servers, or a server
// and the repair command) never write the same journal. A lock whose process is gone is stale and taken over.
//
// Every step that decides who owns the directory is one atomic file-system operation, so any number of
// processes starting at once end with exactly one owner:
//   - taking the lock is link(2) of a fully written private file to LOCK, which fails when LOCK exists
//     (so no one ever reads a half-written LOCK);
//   - removing a stale LOCK needs the right to break that very lock, which is the exclusive creation
//     (link again) of LOCK.break-<id>.<k>, where <id> names the stale LOCK file (inode, mtime, pid): only
//     its holder may unlink LOCK, and only after checking that LOCK is still that file. Then everyone
//     races on the link to LOCK again. A breaker that dies holding the right leaves LOCK.break-<id>.<k>
//     naming a dead pid; the next contender takes level k+1, so a crash there blocks nothing.
// Reading the pid and deciding "stale" is check-then-act, but the act (unlink) is only ever done by the
// one holder of the right for that exact file, and a file that was replaced has another id.
import { randomUUID } from 'node:crypto'
import { link, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { FILE_MODE } from './files.ts'

export const LOCK_FILE = 'LOCK'
const BREAK_PREFIX = `${LOCK_FILE}.break-`
const TMP_PREFIX = `${LOCK_FILE}.new-`

/** Another live process holds the data directory. */
export class DataDirectoryInUseError extends Error {
  constructor(readonly dir: string, readonly pid: number, readonly since?: Date) {
    const lock = join(dir, LOCK_FILE)
    super(`data directory ${dir} is locked by pid ${pid}${since ? ` (since ${since.toISOString()})` : ''}; if no database server is running there, check with \`ps -p ${pid}\` and remove ${lock}`)
    this.name = 'DataDirectoryInUseError'
  }
}

// Directories this process holds or is taking. A LOCK naming our own pid that is not in here was left by
// an earlier process that had the same pid (common in containers, where the server may always be pid 1).
const openDirs = new Set<string>()

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code

/** The pid a lock-like file names (NaN when empty or unreadable: an old version died before writing it). */
async function pidIn(path: string): Promise<number | undefined> {
  try {
    return Number((await readFile(path, 'utf8')).trim())
  } catch (err) {
    if (code(err) === 'ENOENT') return undefined
    throw err
  }
}

const ownerIsGone = (pid: number): boolean => !(Number.isInteger(pid) && pid > 0 && isAlive(pid) && pid !== process.pid)

/** Creates `path` holding our pid, atomically (complete or absent); false if it exists. */
async function createWithPid(dir: string, path: string): Promise<boolean> {
  const tmp = join(dir, `${TMP_PREFIX}${process.pid}-${randomUUID()}`)
  await writeFile(tmp, String(process.pid), { mode: FILE_MODE, flag: 'wx' })
  try {
    await link(tmp, path)
    return true
  } catch (err) {
    if (code(err) === 'EEXIST') return false
    throw err
  } finally {
    await rm(tmp, { force: true })
  }
}

/** Which LOCK file this is: a replaced or re-created LOCK has another id. */
async function lockId(lockPath: string): Promise<{ id: string; pid: number; since: Date } | undefined> {
  let st
  try {
    st = await stat(lockPath, { bigint: true })
  } catch (err) {
    if (code(err) === 'ENOENT') return undefined
    throw err
  }
  const pid = await pidIn(lockPath)
  if (pid === undefined) return undefined
  return { id: `${st.ino}-${st.mtimeNs}-${Number.isInteger(pid) ? pid : 'x'}`, pid, since: new Date(Number(st.mtimeMs)) }
}

/**
 * Removes the stale LOCK with id `id` if this process wins the right to; resolves once LOCK is no longer
 * that file (removed by us or by whoever holds the right), or when a live breaker is still at it.
 */
async function breakStaleLock(dir: string, lockPath: string, id: string): Promise<'broken' | 'busy' | 'changed'> {
  for (let level = 1; ; level++) {
    const right = join(dir, `${BREAK_PREFIX}${id}.${level}`)
    if (await createWithPid(dir, right)) {
      try {
        // Only the holder of this right unlinks this LOCK, so it cannot change between the check and rm.
        if ((await lockId(lockPath))?.id !== id) return 'changed'
        await rm(lockPath, { force: true })
        return 'broken'
      } finally {
        await rm(right, { force: true })
      }
    }
    const breaker = await pidIn(right)
    if (breaker === undefined) return 'changed' // its holder finished in between
    if (!ownerIsGone(breaker)) return 'busy'
  }
}

/** Leftovers of breakers and starters that died mid-way; called once we own the directory. */
async function removeLeftovers(dir: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (name.startsWith(BREAK_PREFIX)) {
      await rm(join(dir, name), { force: true })
    } else if (name.startsWith(TMP_PREFIX)) {
      const pid = Number(name.slice(TMP_PREFIX.length).split('-')[0])
      if (pid !== process.pid && ownerIsGone(pid)) await rm(join(dir, name), { force: true })
    }
  }
}

/** Takes the lock of `dir` (an absolute path); resolves to the function that releases it. */
export async function lockDataDirectory(dir: string): Promise<() => Promise<void>> {
  const lockPath = join(dir, LOCK_FILE)
  if (openDirs.has(dir)) throw new Error(`embedded-mongo: data directory ${dir} is already open in this process`)
  openDirs.add(dir)
  try {
    for (let attempt = 0; attempt < 1000; attempt++) {
      if (await createWithPid(dir, lockPath)) {
        await removeLeftovers(dir)
        let held = true
        return async () => {
          if (!held) return
          held = false
          openDirs.delete(dir)
          await rm(lockPath, { force: true })
        }
      }
      const current = await lockId(lockPath)
      if (!current) continue // released in between
      if (!ownerIsGone(current.pid)) throw new DataDirectoryInUseError(dir, current.pid, current.since)
      // The owner is gone (crash or kill): the lock is stale. A 'busy' breaker needs a moment.
      if ((await breakStaleLock(dir, lockPath, current.id)) === 'busy') await delay(2)
    }
    throw new Error(`embedded-mongo: could not lock data directory ${dir}`)
  } catch (err) {
    openDirs.delete(dir)
    throw err
  }
}
