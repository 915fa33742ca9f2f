// Where `cwo login` keeps its tokens: one per server, in the user's config directory, readable by the user
// only (0600 in a 0700 directory). CWO_CONFIG names another file (tests, several identities).
import { randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { CliError } from './errors.ts'

export interface ServerEntry { token: string; email?: string; saved_at: string }
export interface CliConfig { current: string | null; servers: Record<string, ServerEntry> }

export function configPath(env: Record<string, string | undefined>): string {
  if (env.CWO_CONFIG) return env.CWO_CONFIG
  const base = env.XDG_CONFIG_HOME || (process.platform === 'win32' && env.APPDATA) || join(env.HOME || homedir(), '.config')
  return join(base, 'cwo', 'config.json')
}

/** The server's canonical form, the key its token is stored under: origin and path, no trailing slash. */
export function normalizeServer(server: string): string {
  let url: URL
  try { url = new URL(server) } catch { throw new CliError(`not a server URL: ${server} (e.g. http://localhost:3000)`, 2) }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`not a server URL: ${server} (http or https)`, 2)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

export async function readConfig(path: string): Promise<CliConfig> {
  let text: string
  try { text = await readFile(path, 'utf8') } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { current: null, servers: {} }
    throw new CliError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`)
  }
  try {
    const parsed = JSON.parse(text) as Partial<CliConfig>
    const servers: Record<string, ServerEntry> = {}
    // An entry without a token (edited by hand) is as good as absent.
    if (parsed.servers && typeof parsed.servers === 'object') {
      for (const [server, entry] of Object.entries(parsed.servers)) if (entry && typeof entry.token === 'string' && entry.token) servers[server] = entry
    }
    return { current: typeof parsed.current === 'string' ? parsed.current : null, servers }
  } catch {
    throw new CliError(`${path} is not valid JSON: fix or remove it, then log in again`)
  }
}

/** Reads, changes and writes the config whole (the change answers what the command reports). */
export async function updateConfig<T>(path: string, change: (config: CliConfig) => T): Promise<T> {
  const config = await readConfig(path)
  const result = change(config)
  await writeConfig(path, config)
  return result
}

/** Written whole (temporary file, then rename), never world-readable, not even for a moment. */
export async function writeConfig(path: string, config: CliConfig): Promise<void> {
  // A name of its own per write: two cwo at once (or two commands of one test process) never share it.
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 })
    await writeFile(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600, flag: 'wx' })
    await chmod(tmp, 0o600) // the mode is masked by the umask at creation; this makes it exact
    await rename(tmp, path)
  } catch (err) {
    await rm(tmp, { force: true })
    throw new CliError(`cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unwritable'}`)
  }
}
