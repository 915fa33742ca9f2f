// Secrets the server needs to start (the JWT signing key, the credential encryption key). The environment
// variable always wins. Production refuses to start without it. Development generates one and keeps it in
// DATA_DIR (mode 0600) so it survives restarts, with a warning. Tests get a random in-memory one.
import { mkdir, readFile, writeFile, chmod } from 'node:fs/promises'
import { join } from 'node:path'

interface Warner { warn(obj: object, msg: string): void }

export interface SecretSpec {
  /** The environment variable's name, for messages. */
  variable: string
  /** Its value, when set. */
  value: string | undefined
  nodeEnv: 'development' | 'production' | 'test'
  dataDir: string
  /** File name under dataDir for the development value. */
  file: string
  generate: () => string
  isValid: (value: string) => boolean
}

export async function resolveSecret(spec: SecretSpec, log: Warner): Promise<string> {
  if (spec.value) return spec.value
  if (spec.nodeEnv === 'production') throw new Error(`${spec.variable} is required in production`)
  if (spec.nodeEnv === 'test') return spec.generate()
  const file = join(spec.dataDir, spec.file)
  const existing = await readSecret(file, spec.isValid)
  if (existing) {
    log.warn({ file }, `${spec.variable} is not set: using the development value kept in this file; set ${spec.variable} outside development`)
    return existing
  }
  await mkdir(spec.dataDir, { recursive: true })
  const secret = spec.generate()
  try {
    await writeFile(file, secret + '\n', { mode: 0o600, flag: 'wx' })
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      const theirs = await readSecret(file, spec.isValid)
      if (theirs) return theirs
    }
    throw err
  }
  await chmod(file, 0o600)
  log.warn({ file }, `${spec.variable} is not set: generated a development value and kept it in this file; set ${spec.variable} outside development`)
  return secret
}

async function readSecret(file: string, isValid: (value: string) => boolean): Promise<string | undefined> {
  try {
    const value = (await readFile(file, 'utf8')).trim()
    return isValid(value) ? value : undefined
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}
