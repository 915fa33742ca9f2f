// MANIFEST: the data directory's own record of what it holds, so a deleted, replaced or older file is
// noticed at start-up instead of silently starting with less. Written atomically (temp file, fsync,
// rename, directory fsync) whenever the generation changes. JSON so an operator can read it; the
// checksum catches media damage, which JSON parsing alone would not (a flipped digit still parses).
import { open, readFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { crc32 } from '../crc32.ts'
import { DataDirectoryDamagedError } from './damaged.ts'
import { FILE_MODE, fsyncDir } from './files.ts'

export const MANIFEST_FILE = 'MANIFEST'
export const MANIFEST_TMP = 'MANIFEST.tmp'
const FORMAT = 1

export interface Manifest {
  /** Generation of the snapshot (0: none yet) and of the one journal written after it. */
  generation: number
  /** The snapshot of that generation, if one has been written: its size and the id in its header. */
  snapshot: { bytes: number; id: string | null } | null
  journal: string
  /** The id in that journal's header (null: a journal from before headers). */
  journalId: string | null
}

function checksum(body: object): number {
  return crc32(Buffer.from(JSON.stringify(body)))
}

export async function readManifest(dir: string): Promise<Manifest | undefined> {
  let text: string
  try {
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  const damaged = (): never => { throw new DataDirectoryDamagedError(dir, MANIFEST_FILE, 'not a valid manifest') }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return damaged()
  }
  if (typeof parsed !== 'object' || parsed === null) return damaged()
  const { crc32: stored, ...body } = parsed as Record<string, unknown>
  if (stored !== checksum(body) || body.format !== FORMAT) return damaged()
  const { generation, snapshot, journal, journalId } = body as unknown as Manifest
  if (!Number.isSafeInteger(generation) || generation < 0 || typeof journal !== 'string') return damaged()
  return { generation, snapshot: snapshot ?? null, journal, journalId: journalId ?? null }
}

export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const body = { format: FORMAT, generation: manifest.generation, snapshot: manifest.snapshot, journal: manifest.journal, journalId: manifest.journalId }
  const text = `${JSON.stringify({ ...body, crc32: checksum(body) })}\n`
  const tmp = join(dir, MANIFEST_TMP)
  const fh = await open(tmp, 'w', FILE_MODE)
  try {
    await fh.writeFile(text)
    await fh.sync()
  } finally {
    await fh.close()
  }
  await rename(tmp, join(dir, MANIFEST_FILE))
  await fsyncDir(dir)
}
