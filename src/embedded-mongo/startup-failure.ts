// The one line `npm run embedded-db` prints when start-up fails for a reason the operator can fix (the
// directory is damaged, in use, not writable, or its disk is full; the port is taken); undefined for anything else, which
// is a bug and keeps its stack.
import { resolve } from 'node:path'
import { DataDirectoryDamagedError } from './storage/damaged.ts'
import { DataDirectoryInUseError } from './storage/dir-lock.ts'

const HINTS: Record<string, (dir: string) => string> = {
  EACCES: (dir) => `DATA_DIR (${dir}) must be a directory this user (uid ${process.getuid?.() ?? '?'}) can create files in`,
  EPERM: (dir) => `DATA_DIR (${dir}) must be a directory this user (uid ${process.getuid?.() ?? '?'}) can create files in`,
  EROFS: (dir) => `DATA_DIR (${dir}) is on a read-only filesystem`,
  ENOTDIR: (dir) => `DATA_DIR (${dir}) must be a directory, and every part of its path too`,
  EEXIST: (dir) => `DATA_DIR (${dir}) must be a directory`,
  ENOSPC: (dir) => `the disk holding DATA_DIR (${dir}) is full; free some space and start again`,
  EDQUOT: (dir) => `this user's disk quota on DATA_DIR (${dir}) is used up`,
  EMFILE: () => 'too many open files; raise the limit (ulimit -n)',
  ENFILE: () => 'too many open files on this machine',
  EADDRINUSE: () => `EMBEDDED_DB_PORT ${process.env.EMBEDDED_DB_PORT ?? ''} is in use by another program`,
  EADDRNOTAVAIL: () => `EMBEDDED_DB_HOST ${process.env.EMBEDDED_DB_HOST ?? ''} is not an address of this machine`,
}

export function startupFailure(err: unknown, dataDir: string | undefined): string | undefined {
  if (err instanceof DataDirectoryDamagedError || err instanceof DataDirectoryInUseError) return err.message
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  const hint = typeof code === 'string' ? HINTS[code] : undefined
  if (!hint) return undefined
  // Node's message is one line already ("EACCES: permission denied, mkdir '/srv/data'").
  return `could not start: ${(err as Error).message.split('\n')[0]}: ${hint(resolve(dataDir ?? '.'))}`
}
