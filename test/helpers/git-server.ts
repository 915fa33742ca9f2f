// Git repositories served over smart HTTP on loopback, for the import and build tests. The repositories are
// made with the `git` binary and served by `git http-backend` (git's own CGI server), so a client talks to
// the same protocol a real forge speaks. `auth` makes every request need HTTP Basic with that login (as a
// private repository on a forge does: 401 with a Basic challenge otherwise).
import { basicLogin } from './basic-auth.ts'
import { createServer, type Server } from 'node:http'
import { spawn, execFile } from 'node:child_process'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tmpdir } from 'node:os'
import { promisify } from 'node:util'
import type { AddressInfo } from 'node:net'

const run = promisify(execFile)

export interface GitServerOptions {
  /** When set, every request needs this HTTP Basic login. */
  auth?: { username: string; password: string }
}

export interface GitServer {
  /** http://127.0.0.1:PORT — a repository named `app` is at `${url}/app.git`. */
  url: string
  /** Creates (or adds a commit to) the bare repository `<name>.git` holding exactly `files` on `branch`. */
  addRepo(name: string, files: Record<string, string | Buffer>, options?: { branch?: string; message?: string }): Promise<{ url: string; commit: string }>
  /** Requests received, for tests that check what a client sent (never the Authorization value). */
  requests: Array<{ method: string; path: string; authorized: boolean }>
  close(): Promise<void>
}

const gitEnv = { GIT_AUTHOR_NAME: 'test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'test', GIT_COMMITTER_EMAIL: 'test@example.com', GIT_CONFIG_NOSYSTEM: '1', HOME: tmpdir() }

export async function startGitServer(options: GitServerOptions = {}): Promise<GitServer> {
  const root = await mkdtemp(join(tmpdir(), 'git-server-'))
  const requests: GitServer['requests'] = []
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const login = basicLogin(req)
    const authorized = !options.auth || (login?.user === options.auth.username && login.pass === options.auth.password)
    requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, authorized })
    if (!authorized) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="test git"', 'content-type': 'text/plain' })
      res.end('authentication required\n')
      return
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...gitEnv, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname), QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET', CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '', HTTP_GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_USER: login?.user ?? '', REMOTE_ADDR: '127.0.0.1', PATH: process.env.PATH ?? '/usr/bin:/bin',
      },
    })
    req.pipe(cgi.stdin)
    cgi.stdin.on('error', () => undefined)
    let head = Buffer.alloc(0)
    let headersDone = false
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) { res.write(chunk); return }
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end === -1) return
      headersDone = true
      let status = 200
      const headers: Record<string, string> = {}
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':')
        if (colon === -1) continue
        const name = line.slice(0, colon).trim()
        const value = line.slice(colon + 1).trim()
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10)
        else headers[name] = value
      }
      res.writeHead(status, headers)
      res.write(head.subarray(end + 4))
    })
    cgi.on('close', () => { if (!headersDone) res.writeHead(500); res.end() })
    cgi.on('error', () => { if (!res.headersSent) res.writeHead(500); res.end() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  async function addRepo(name: string, files: Record<string, string | Buffer>, opts: { branch?: string; message?: string } = {}) {
    const branch = opts.branch ?? 'main'
    const bare = join(root, `${name}.git`)
    const work = await mkdtemp(join(tmpdir(), 'git-work-'))
    try {
      const git = (...args: string[]) => run('git', args, { cwd: work, env: { ...process.env, ...gitEnv } })
      await git('init', '-q', '-b', branch)
      for (const [path, content] of Object.entries(files)) {
        await mkdir(dirname(join(work, path)), { recursive: true })
        await writeFile(join(work, path), content)
      }
      await git('add', '-A')
      await git('commit', '-q', '--allow-empty', '-m', opts.message ?? 'test commit')
      const isNew = !existsSync(bare)
      if (isNew) await run('git', ['init', '-q', '--bare', bare], { env: { ...process.env, ...gitEnv } })
      await git('push', '-q', '--force', bare, `HEAD:refs/heads/${branch}`)
      // The bare repository's HEAD names the first branch pushed, as a forge's default branch.
      if (isNew) await run('git', ['--git-dir', bare, 'symbolic-ref', 'HEAD', `refs/heads/${branch}`], { env: { ...process.env, ...gitEnv } })
      const { stdout } = await git('rev-parse', 'HEAD')
      return { url: `${url}/${name}.git`, commit: stdout.trim() }
    } finally {
      await rm(work, { recursive: true, force: true })
    }
  }

  return {
    url, addRepo, requests,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await rm(root, { recursive: true, force: true })
    },
  }
}
