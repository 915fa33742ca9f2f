// A Git repository's files of interest for an import: a shallow, single-branch clone with isomorphic-git
// (pure JavaScript, no `git` binary on the API host) over an HTTP client of our own, so that every request,
// every redirect hop and every address actually connected to passes the outbound policy, and so that the
// bytes received, the time taken, the number of files and the size of each file read are all bounded.
//
// The clone goes to a temporary git directory (objects only, no checkout), removed afterwards; only the text
// files an analysis can use are read, from the object store, into memory. A token for a private repository
// is sent as HTTP Basic on this fetch's requests only (dropped when a redirect leaves the origin); it is never
// stored, logged, or put in an error message: every message here is our own words.
import http from 'node:http'
import https from 'node:https'
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import * as nodeFs from 'node:fs'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import git from 'isomorphic-git'
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git'
import { AppError } from '../../errors.ts'
import type { OutboundPolicy } from '../../net/outbound-policy.ts'
import { describeNetworkError } from '../../net/network-errors.ts'

export interface GitFetchLimits {
  /** Bytes received from the Git host, all requests together (IMPORT_GIT_MAX_BYTES). */
  maxBytes: number
  /** Files (blobs) in the commit's tree (IMPORT_GIT_MAX_FILES). */
  maxFiles: number
  /** Largest file read; larger files of interest are skipped with a log line (IMPORT_GIT_MAX_FILE_BYTES). */
  maxFileBytes: number
  /** The whole fetch, transfer aborted when it runs out (IMPORT_GIT_TIMEOUT_MS). */
  timeoutMs: number
}

export interface GitFetchRequest {
  url: string
  /** Default: the repository's default branch (its HEAD). */
  branch?: string
  /** For a private repository: sent as the HTTP Basic password, with `username` (default `x-access-token`). */
  token?: string
  username?: string
}

export interface GitFetchResult {
  /** Repository-relative path (no leading slash) → text content, for the files of interest only. */
  files: Map<string, string>
  commit: string
  /** The branch fetched (the default branch's name when none was asked for, if the server says it). */
  branch: string | null
  file_count: number
  bytes_received: number
}

export interface GitFetchOptions {
  policy: OutboundPolicy
  limits: GitFetchLimits
  /** Transfer progress, 0..1 when the total is known. */
  onProgress?: (phase: string, fraction: number | null) => void
  /** Human-readable lines for the import's log (never a token, never a server's raw text beyond sideband messages). */
  onLog?: (line: string) => void
}

/** A fetch that failed for a reason the user can act on; the message is ours, safe to show and store. */
export class GitFetchError extends AppError {
  constructor(readonly kind: 'branch-not-found' | 'not-a-repository' | 'auth-required' | 'auth-failed' | 'too-large' | 'timeout' | 'network' | 'refused', message: string) {
    super(kind === 'refused' ? 400 : 502, message)
  }
}

const MAX_REDIRECTS = 5
/** Requests git sends (ref negotiation) are small; anything bigger is not ours to send. */
const MAX_REQUEST_BODY = 1_048_576
const DEFAULT_USERNAME = 'x-access-token'

const COMPOSE_FILE = /^(docker-)?compose(\.[\w.-]+)?\.ya?ml$/i
const DOCKERFILE = /^(Dockerfile|Containerfile)(\.[\w.-]+)?$|\.dockerfile$/i
const ENV_FILE = /^\.env(\.[\w.-]+)?$|\.env$/i
/** A relative path as a compose file writes one (./app.env, config/nginx.conf, ../common.yml). */
const PATH_WORD = /[\w.-]+(?:\/[\w.-]+)*/g
/** Files read because a compose file names them, at most. */
const MAX_REFERENCED_FILES = 200

/** Whether a file can matter to an analysis: compose files, Dockerfiles, and env files they may name. */
export function isFileOfInterest(path: string): boolean {
  const name = posix.basename(path)
  return COMPOSE_FILE.test(name) || DOCKERFILE.test(name) || ENV_FILE.test(name)
}

/** Shallow-clones `request.url` and returns its files of interest. Throws GitFetchError (or BadRequest for a refused URL). */
export async function fetchRepository(request: GitFetchRequest, options: GitFetchOptions): Promise<GitFetchResult> {
  const { policy, limits } = options
  const log = options.onLog ?? (() => undefined)
  // Refused before anything is created: scheme, credentials in the URL, a refused literal or resolved address.
  const url = await policy.check(request.url, 'repository url')

  const abort = new AbortController()
  let stopped: GitFetchError | null = null
  const stop = (reason: GitFetchError) => {
    stopped ??= reason
    abort.abort()
  }
  const timer = setTimeout(() => stop(new GitFetchError('timeout', `the repository took longer than ${formatMs(limits.timeoutMs)} to fetch (IMPORT_GIT_TIMEOUT_MS)`)), limits.timeoutMs)
  timer.unref()
  const counter = { bytes: 0 }
  const client = policedHttpClient({
    policy, signal: abort.signal, counter,
    onOverLimit: () => stop(new GitFetchError('too-large', `the repository is larger than the import limit of ${formatBytes(limits.maxBytes)} (IMPORT_GIT_MAX_BYTES)`)),
    maxBytes: limits.maxBytes,
  })
  const headers: Record<string, string> = {}
  if (request.token) headers.authorization = `Basic ${Buffer.from(`${request.username ?? DEFAULT_USERNAME}:${request.token}`).toString('base64')}`

  const dir = await mkdtemp(join(tmpdir(), 'import-git-'))
  const gitdir = join(dir, '.git')
  const cache = {}
  const aborted = new Promise<never>((_resolve, reject) => {
    abort.signal.addEventListener('abort', () => reject(stopped ?? new GitFetchError('timeout', 'the fetch was stopped')), { once: true })
  })
  aborted.catch(() => undefined)
  try {
    log(`fetching ${displayUrl(url)}${request.branch ? ` (branch ${request.branch})` : ''}`)
    const clone = git.clone({
      fs: nodeFs, http: client, dir, gitdir, url: url.href, ref: request.branch, singleBranch: true, depth: 1, noCheckout: true, noTags: true,
      headers, cache,
      onProgress: (e) => options.onProgress?.(e.phase, e.total ? Math.min(1, e.loaded / e.total) : null),
      onMessage: (message) => { for (const line of message.split(/\r?\n|\r/)) if (isWorthLogging(line)) log(`remote: ${redact(line.trim(), request.token)}`) },
    })
    clone.catch(() => undefined)
    try {
      await Promise.race([clone, aborted])
    } catch (err) {
      throw stopped ?? describeCloneError(err, request)
    }
    const commit = await git.resolveRef({ fs: nodeFs, gitdir, ref: 'HEAD' })
    const branch = request.branch ?? await git.currentBranch({ fs: nodeFs, gitdir, fullname: false }).catch(() => undefined) ?? null
    log(`fetched commit ${commit.slice(0, 12)}${branch ? ` of ${branch}` : ''}: ${formatBytes(counter.bytes)} received`)
    const read = await readFilesOfInterest(gitdir, commit, cache, limits, log, () => { if (stopped) throw stopped })
    return { files: read.files, commit, branch, file_count: read.count, bytes_received: counter.bytes }
  } finally {
    clearTimeout(timer)
    abort.abort()
    await rm(dir, { recursive: true, force: true }).catch(() => undefined)
  }
}

async function readFilesOfInterest(gitdir: string, commit: string, cache: object, limits: GitFetchLimits, log: (line: string) => void, checkStopped: () => void) {
  const { commit: c } = await git.readCommit({ fs: nodeFs, gitdir, oid: commit, cache })
  /** Every regular file of the commit: path → blob id. */
  const blobs = new Map<string, string>()
  const pending: Array<{ oid: string; prefix: string }> = [{ oid: c.tree, prefix: '' }]
  while (pending.length) {
    checkStopped()
    const { oid, prefix } = pending.pop()!
    const { tree } = await git.readTree({ fs: nodeFs, gitdir, oid, cache })
    for (const entry of tree) {
      const path = prefix ? `${prefix}/${entry.path}` : entry.path
      if (entry.type === 'tree') { pending.push({ oid: entry.oid, prefix: path }); continue }
      // Submodules (commits) are other repositories; they are not fetched.
      if (entry.type !== 'blob') continue
      if (blobs.size >= limits.maxFiles) throw new GitFetchError('too-large', `the repository has more than ${limits.maxFiles} files, the import limit (IMPORT_GIT_MAX_FILES)`)
      // A symbolic link's blob is its target path, not a file's content.
      if (entry.mode !== '120000') blobs.set(path, entry.oid)
    }
  }
  const files = new Map<string, string>()
  const read = async (path: string): Promise<string | undefined> => {
    checkStopped()
    const { blob } = await git.readBlob({ fs: nodeFs, gitdir, oid: blobs.get(path)!, cache })
    if (blob.byteLength > limits.maxFileBytes) { log(`skipped ${path}: ${formatBytes(blob.byteLength)} is over the ${formatBytes(limits.maxFileBytes)} per-file limit (IMPORT_GIT_MAX_FILE_BYTES)`); return undefined }
    if (blob.includes(0)) { log(`skipped ${path}: not a text file`); return undefined }
    const text = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString('utf8')
    files.set(path, text)
    return text
  }
  for (const path of [...blobs.keys()].filter(isFileOfInterest).sort()) await read(path)
  // Files a compose file names (env_file, configs and secrets file:, extends file:) can be called anything:
  // every path-like word of a compose file that names a file of the commit, relative to the compose file, is read too.
  const referenced = new Set<string>()
  for (const [path, text] of files) {
    if (!COMPOSE_FILE.test(posix.basename(path))) continue
    const dir = posix.dirname(path)
    for (const word of text.match(PATH_WORD) ?? []) {
      const candidate = posix.normalize(posix.join(dir, word))
      if (blobs.has(candidate) && !files.has(candidate)) referenced.add(candidate)
      if (referenced.size >= MAX_REFERENCED_FILES) break
    }
  }
  for (const path of [...referenced].sort()) await read(path)
  log(`${blobs.size} files in the repository; read ${files.size}${files.size ? `: ${[...files.keys()].slice(0, 20).join(', ')}${files.size > 20 ? ', …' : ''}` : ''}`)
  return { files, count: blobs.size }
}

/** isomorphic-git's errors, in our words (their text can quote a server's reply). */
function describeCloneError(err: unknown, request: GitFetchRequest): AppError {
  if (err instanceof AppError) return err
  const e = err as { code?: string; data?: { statusCode?: number; what?: string }; message?: string }
  const code = e?.code
  if (code === 'HttpError') {
    const status = e.data?.statusCode
    if (status === 401 || status === 403) {
      return request.token
        ? new GitFetchError('auth-failed', 'the Git host refused the token: check that it is valid and may read this repository')
        : new GitFetchError('auth-required', 'the repository needs authentication (private repository?): give a `token` that may read it')
    }
    if (status === 404) return new GitFetchError('not-a-repository', 'no Git repository at this URL (the host answered 404)')
    return new GitFetchError('network', `the Git host answered HTTP ${status ?? 'with an error'}`)
  }
  if (code === 'NotFoundError') {
    return request.branch
      ? new GitFetchError('branch-not-found', `branch '${request.branch}' not found in the repository`)
      : new GitFetchError('branch-not-found', 'the repository has no default branch (is it empty?)')
  }
  if (code === 'SmartHttpError' || code === 'ParseError' || code === 'EmptyServerResponseError' || code === 'RemoteCapabilityError') {
    return new GitFetchError('not-a-repository', 'the URL does not serve a Git repository over smart HTTP')
  }
  const network = describeNetworkError(err, 'Git host')
  if (network) return new GitFetchError('network', `the Git host could not be reached: ${network.message}`)
  return new GitFetchError('network', 'fetching the repository failed')
}

// The HTTP client isomorphic-git calls for every request.

interface ClientOptions {
  policy: OutboundPolicy
  signal: AbortSignal
  counter: { bytes: number }
  maxBytes: number
  onOverLimit: () => void
}

function policedHttpClient(opts: ClientOptions): HttpClient {
  return {
    async request({ url, method = 'GET', headers = {}, body }: GitHttpRequest): Promise<GitHttpResponse> {
      const payload = body ? await collect(body, MAX_REQUEST_BODY) : undefined
      let current = url
      let currentMethod = method
      let currentHeaders: Record<string, string> = { ...headers }
      let currentPayload = payload
      for (let hop = 0; ; hop++) {
        // Each hop is checked: a redirect to a refused address is refused.
        const target = await opts.policy.check(current, 'repository url')
        const res = await send(target, currentMethod, currentHeaders, currentPayload, opts)
        const status = res.statusCode ?? 0
        const location = res.headers.location
        if (status >= 300 && status < 400 && status !== 304 && location) {
          res.resume()
          if (hop >= MAX_REDIRECTS) throw new GitFetchError('network', `the Git host redirected more than ${MAX_REDIRECTS} times`)
          const next = new URL(location, target)
          // Credentials stay with the origin they were given for.
          if (next.origin !== target.origin) currentHeaders = Object.fromEntries(Object.entries(currentHeaders).filter(([k]) => k.toLowerCase() !== 'authorization'))
          if (status === 303) { currentMethod = 'GET'; currentPayload = undefined }
          current = next.href
          continue
        }
        return {
          url: current, method: currentMethod, statusCode: status, statusMessage: res.statusMessage ?? '',
          headers: flatHeaders(res.headers), body: counted(res, opts),
        }
      }
    },
  }
}

function send(url: URL, method: string, headers: Record<string, string>, payload: Buffer | undefined, opts: ClientOptions): Promise<http.IncomingMessage> {
  const lib = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const req = lib.request(url, {
      method, headers: { ...headers, ...(payload && { 'content-length': String(payload.length) }), 'user-agent': 'git/isomorphic-git' },
      signal: opts.signal, lookup: policedLookup(opts.policy, url.protocol), agent: false,
    }, resolve)
    req.on('error', reject)
    req.end(payload)
  })
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * The addresses a connection may use, checked again at connect time: the policy's own check resolved the
 * name a moment earlier, and a name may point elsewhere by now (DNS rebinding).
 */
function policedLookup(policy: OutboundPolicy, protocol: string) {
  return (hostname: string, options: { all?: boolean; family?: number | string } | number, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) { callback(err, []); return }
      try {
        for (const a of addresses) policy.checkFormat(`${protocol}//${isIP(a.address) === 6 ? `[${a.address}]` : a.address}/`, 'repository url')
      } catch (refused) {
        callback(refused as NodeJS.ErrnoException, [])
        return
      }
      if (typeof options === 'object' && options.all) callback(null, addresses)
      else callback(null, addresses[0].address, addresses[0].family)
    })
  }
}

async function* counted(res: http.IncomingMessage, opts: ClientOptions): AsyncIterableIterator<Uint8Array> {
  for await (const chunk of res as AsyncIterable<Buffer>) {
    opts.counter.bytes += chunk.length
    if (opts.counter.bytes > opts.maxBytes) {
      opts.onOverLimit()
      res.destroy()
      throw new GitFetchError('too-large', 'over the size limit')
    }
    yield chunk
  }
}

async function collect(body: AsyncIterableIterator<Uint8Array> | Uint8Array[] | Iterable<Uint8Array>, max: number): Promise<Buffer> {
  const parts: Buffer[] = []
  let size = 0
  for await (const part of body as AsyncIterable<Uint8Array>) {
    size += part.byteLength
    if (size > max) throw new GitFetchError('too-large', 'the clone request grew too large')
    parts.push(Buffer.from(part))
  }
  return Buffer.concat(parts)
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v
  return out
}

/** The URL as it may be shown: no query (it can carry tokens), no credentials (refused anyway). */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`
}

/** A remote's progress meter repeats itself a hundred times; its final line says the same. */
function isWorthLogging(line: string): boolean {
  return line.trim() !== '' && (!/\d+% \(\d+\/\d+\)/.test(line) || /done\.?\s*$/.test(line))
}

function redact(text: string, token: string | undefined): string {
  return token ? text.split(token).join('***') : text
}

function formatBytes(n: number): string {
  if (n >= 1_048_576) return `${Math.round(n / 104_857.6) / 10} MB`
  if (n >= 1024) return `${Math.round(n / 102.4) / 10} KB`
  return `${n} bytes`
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10}s` : `${ms}ms`
}

