// LOCK: the pid of the process that owns a data directory, so two processes (two servers, or a server
// and the repair command) never write the same journal. A lock whose process is gone is stale and taken over.
import { open, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { FILE_MODE } from './files.ts'

export const LOCK_FILE = 'LOCK'

/** Another live process holds the data directory. */
export class DataDirectoryInUseError extends Error {
  constructor(readonly dir: string, readonly pid: number) {
    super(`data directory ${dir} is in use by process ${pid}`)
    this.name = 'DataDirectoryInUseError'
  }
}

// Directories this process holds. A LOCK naming our own pid that is not in here was left by an earlier
// process that had the same pid (common in containers, where the server may always be pid 1).
const openDirs = new Set<string>()

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Takes the lock of `dir` (an absolute path); resolves to the function that releases it. */
export async function lockDataDirectory(dir: string): Promise<() => Promise<void>> {
  const lockPath = join(dir, LOCK_FILE)
  const inThisProcess = (): Error => new Error(`embedded-mongo: data directory ${dir} is already open in this process`)
  if (openDirs.has(dir)) throw inThisProcess()
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(lockPath, 'wx', FILE_MODE)
      openDirs.add(dir)
      await fh.writeFile(String(process.pid))
      await fh.close()
      let held = true
      return async () => {
        if (!held) return
        held = false
        openDirs.delete(dir)
        await rm(lockPath, { force: true })
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    if (openDirs.has(dir)) throw inThisProcess()
    const owner = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim())
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner) && owner !== process.pid) {
      throw new DataDirectoryInUseError(dir, owner)
    }
    // The owner is gone (crash or kill): the lock is stale.
    await rm(lockPath, { force: true })
  }
  throw new Error(`embedded-mongo: could not lock data directory ${dir}`)
}
