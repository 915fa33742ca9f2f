// Which server a command talks to and with which token: --server, then CWO_SERVER, then the server of the
// last `cwo login` (`cwo context` switches it); the token from CWO_TOKEN, else the one stored for that server.
import { apiClient, type ApiClient } from './client.ts'
import { configPath, normalizeServer, readConfig, type CliConfig } from './config.ts'
import { CliError } from './errors.ts'
import type { CliIO } from './io.ts'

export const DEFAULT_SERVER = 'http://localhost:3000'

export interface Session {
  server: string
  token: string | null
  client: ApiClient
}

function serverOf(io: CliIO, flag: string | undefined, config: CliConfig): string {
  if (flag) return normalizeServer(flag)
  if (io.env.CWO_SERVER) return normalizeServer(io.env.CWO_SERVER)
  return config.current ?? DEFAULT_SERVER
}

// The config file is read only when it decides something: with a server and CWO_TOKEN given, even an
// unreadable one is no obstacle.
const noConfig: CliConfig = { current: null, servers: {} }

export async function resolveServer(io: CliIO, flag: string | undefined): Promise<string> {
  return serverOf(io, flag, flag || io.env.CWO_SERVER ? noConfig : await readConfig(configPath(io.env)))
}

/** The session for a command; `needToken` (most commands) refuses early, before any request, without one. */
export async function openSession(io: CliIO, flag: string | undefined, needToken = true): Promise<Session> {
  const config = (flag || io.env.CWO_SERVER) && io.env.CWO_TOKEN ? noConfig : await readConfig(configPath(io.env))
  const server = serverOf(io, flag, config)
  const token = io.env.CWO_TOKEN || config.servers[server]?.token || null
  if (!token && needToken) throw new CliError(`not logged in to ${server}: run cwo login --server ${server} (or set CWO_TOKEN)`)
  return { server, token, client: apiClient(server, token, io.signal) }
}
