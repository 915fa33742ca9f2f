// The checks of a build request that a schema cannot make: paths that stay inside the repository, git ref
// names git itself would accept, an image name without a registry host (the registry gives the host), and
// bounded build arguments. Every failure is a 400 naming the field.
import { posix } from 'node:path'
import { BadRequest } from '../../errors.ts'

export interface StartBuild {
  repo_url: string
  branch?: string
  commit?: string
  context_dir?: string
  dockerfile?: string
  build_args?: Record<string, string>
  registry_id: string
  image_name: string
  image_tag?: string
  cluster: string
  namespace?: string
  workflow_id?: string
  node_id?: string
}

export interface CheckedBuild {
  branch: string | null
  commit: string | null
  contextDir: string
  /** Repository-relative. */
  dockerfile: string
  buildArgs: Record<string, string>
  imageName: string
  imageTag: string
  namespace: string
}

export const MAX_BUILD_ARGS = 64
export const MAX_BUILD_ARGS_BYTES = 32 * 1024
const BUILD_ARG_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/
const TAG = /^[\w][\w.-]{0,127}$/
const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
// Printable, no shell or glob specials git refuses in ref names (git check-ref-format).
const REF_CHARS = /^[A-Za-z0-9._/+@-]+$/

/** A repository-relative path: no absolute path, no `..`, no backslash or control character. Normalised. */
export function relativePath(value: string, field: string): string {
  if (value.includes('\\') || /[\u0000-\u001f\u007f]/.test(value)) throw new BadRequest(`body/${field} must not contain backslashes or control characters`)
  if (value.startsWith('/')) throw new BadRequest(`body/${field} must be relative to the repository root`)
  if (value.split('/').includes('..')) throw new BadRequest(`body/${field} must not contain ".." (it must stay inside the repository)`)
  const normal = posix.normalize(value || '.').replace(/\/+$/, '')
  return normal === '' ? '.' : normal
}

export function checkBranch(branch: string): string {
  const bad = !REF_CHARS.test(branch) || branch.startsWith('-') || branch.startsWith('/') || branch.endsWith('/') || branch.endsWith('.')
    || branch.endsWith('.lock') || branch.includes('..') || branch.includes('//') || branch.includes('@{') || branch.split('/').some((c) => c.startsWith('.'))
  if (bad) throw new BadRequest('body/branch is not a valid git branch name')
  // The clone fetches refs/heads/<branch>: a full ref given here would become refs/heads/refs/heads/…
  return branch.replace(/^refs\/heads\//, '')
}

export function checkImageName(name: string): string {
  const first = name.split('/')[0]
  if (name.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    throw new BadRequest('body/image_name must not name a registry host: the registry (registry_id) gives it')
  }
  if (name.length > 255 || !name.split('/').every((c) => PATH_COMPONENT.test(c))) {
    throw new BadRequest('body/image_name must be lower-case path components (letters, digits, separators . _ -), joined by /')
  }
  return name
}

export function checkBuildArgs(args: Record<string, string> | undefined): Record<string, string> {
  if (!args) return {}
  const entries = Object.entries(args)
  if (entries.length > MAX_BUILD_ARGS) throw new BadRequest(`body/build_args may hold at most ${MAX_BUILD_ARGS} arguments`)
  let size = 0
  for (const [key, value] of entries) {
    if (!BUILD_ARG_KEY.test(key)) throw new BadRequest(`body/build_args key "${key.slice(0, 64)}" must be a variable name (letters, digits, _; not starting with a digit)`)
    if (typeof value !== 'string') throw new BadRequest(`body/build_args/${key} must be a string`)
    if (/[\u0000\r\n]/.test(value)) throw new BadRequest(`body/build_args/${key} must be one line`)
    size += key.length + Buffer.byteLength(value)
  }
  if (size > MAX_BUILD_ARGS_BYTES) throw new BadRequest(`body/build_args must be at most ${MAX_BUILD_ARGS_BYTES} bytes in all`)
  return Object.fromEntries(entries)
}

export function checkBuildRequest(body: StartBuild): CheckedBuild {
  if ((body.workflow_id === undefined) !== (body.node_id === undefined)) throw new BadRequest('body/workflow_id and body/node_id go together: give both or neither')
  if (body.commit !== undefined && !COMMIT.test(body.commit)) throw new BadRequest('body/commit must be a full commit id (40 or 64 lower-case hex digits)')
  const tag = body.image_tag ?? 'latest'
  if (!TAG.test(tag)) throw new BadRequest('body/image_tag must be 1–128 of letters, digits, _ . - (not starting with . or -)')
  const namespace = body.namespace ?? 'default'
  if (namespace.length > 63 || !NAMESPACE.test(namespace)) throw new BadRequest('body/namespace must be a DNS label (lower-case letters, digits, -)')
  const contextDir = relativePath(body.context_dir ?? '.', 'context_dir')
  // The Dockerfile is named relative to the context directory, as `docker build -f` users expect.
  const dockerfileInContext = relativePath(body.dockerfile ?? 'Dockerfile', 'dockerfile')
  if (dockerfileInContext === '.') throw new BadRequest('body/dockerfile must name a file')
  return {
    branch: body.branch === undefined ? null : checkBranch(body.branch),
    commit: body.commit ?? null,
    contextDir,
    dockerfile: posix.join(contextDir, dockerfileInContext),
    buildArgs: checkBuildArgs(body.build_args),
    imageName: checkImageName(body.image_name),
    imageTag: tag,
    namespace,
  }
}
