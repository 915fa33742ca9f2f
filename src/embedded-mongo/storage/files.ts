// File helpers shared by the storage modules.
import { open, type FileHandle } from 'node:fs/promises'

// The files hold password hashes and sealed credentials: only the owner may read them.
export const FILE_MODE = 0o600
export const DIR_MODE = 0o700

export async function fsyncDir(dir: string): Promise<void> {
  // Makes renames and file creation durable on POSIX; not possible (nor needed) everywhere.
  let fh: FileHandle | undefined
  try {
    fh = await open(dir, 'r')
    await fh.sync()
  } catch {
    // best effort
  } finally {
    await fh?.close().catch(() => undefined)
  }
}

export async function writeAll(fh: FileHandle, data: Buffer): Promise<void> {
  let off = 0
  while (off < data.length) {
    const { bytesWritten } = await fh.write(data, off, data.length - off)
    off += bytesWritten
  }
}
