// A repository's files → an analysis: its compose file (at `path`, else at the root), else its Dockerfiles,
// each becoming a workload that needs a build with the repository prefilled.
import { posix } from 'node:path'
import type { ImportOptions } from '../../../schemas/import-analysis.ts'
import { analyzeCompose } from './analyze.ts'
import { ImportError } from './errors.ts'
import type { Analysis, ImportNode } from './graph.ts'
import { layoutGraph } from './layout.ts'
import { NameSpace, dnsLabel } from './names.ts'

export interface AnalyzeTreeOptions extends ImportOptions { repo_url: string; branch?: string; path?: string }

/** In the order Compose looks for them. */
export const COMPOSE_FILE_NAMES = ['compose.yaml', 'compose.yml', 'docker-compose.yaml', 'docker-compose.yml']
const DOCKERFILE = /(^|\/)(Dockerfile|Containerfile)(\.[A-Za-z0-9_.-]+)?$/
/** Dockerfiles turned into workloads at most; a monorepo with hundreds is imported by folder instead. */
export const MAX_DOCKERFILES = 50

function clean(path: string | undefined): string {
  return posix.normalize(`/${path ?? ''}`).replace(/^\/+|\/+$/g, '')
}

function composeIn(files: ReadonlyMap<string, string>, dir: string): string | undefined {
  return COMPOSE_FILE_NAMES.map((n) => (dir ? `${dir}/${n}` : n)).find((p) => files.has(p))
}

export function analyzeFileTree(files: ReadonlyMap<string, string>, options: AnalyzeTreeOptions): Analysis {
  const dir = clean(options.path)
  if (dir.split('/').includes('..')) throw new ImportError('path must stay inside the repository')
  const repo = { repo_url: options.repo_url, ...(options.branch !== undefined && { branch: options.branch }) }
  const composePath = (dir ? composeIn(files, dir) : undefined) ?? composeIn(files, '')
  if (composePath !== undefined) {
    return analyzeCompose(files.get(composePath)!, { ...options, base_dir: posix.dirname(composePath) === '.' ? '' : posix.dirname(composePath), files, repo })
  }
  const prefix = dir ? `${dir}/` : ''
  const dockerfiles = [...files.keys()].filter((p) => p.startsWith(prefix) && DOCKERFILE.test(p)).sort()
  if (dockerfiles.length === 0) {
    throw new ImportError(`no compose file (${COMPOSE_FILE_NAMES.join(', ')}) and no Dockerfile found${dir ? ` in ${dir} or at the root` : ''}`)
  }
  const warnings: Analysis['warnings'] = []
  if (dockerfiles.length > MAX_DOCKERFILES) warnings.push({ key: 'Dockerfile', message: `${dockerfiles.length} Dockerfiles found; the first ${MAX_DOCKERFILES} (by path) are imported` })
  const names = new NameSpace()
  const nodes: ImportNode[] = []
  const services: Analysis['services'] = []
  for (const file of dockerfiles.slice(0, MAX_DOCKERFILES)) {
    const context = posix.dirname(file)
    const base = posix.basename(file)
    const suffix = base.replace(/^(Dockerfile|Containerfile)\.?/, '')
    const label = [context === '.' ? posix.basename(options.repo_url.replace(/\.git$/, '').replace(/\/+$/, '')) : posix.basename(context), suffix].filter(Boolean).join('-')
    const name = names.claim(dnsLabel(label), file)
    const id = `deployment-${name}`
    const build = { context, ...(base !== 'Dockerfile' && { dockerfile: base }), repoUrl: repo.repo_url, ...(repo.branch !== undefined && { branch: repo.branch }) }
    nodes.push({ id, type: 'deployment', position: { x: 0, y: 0 }, data: { name, image: `${name}:latest`, needsBuild: true, build } })
    warnings.push({ service: name, key: 'Dockerfile', message: `${file}: a workload that needs a build; its ports, environment and storage are not known (add them, or a compose file)` })
    services.push({
      name, resource_name: name, kind: 'deployment', needs_build: true,
      build: { context, ...(base !== 'Dockerfile' && { dockerfile: base }), repo_url: repo.repo_url, ...(repo.branch !== undefined && { branch: repo.branch }) },
      node_ids: [id], depends_on: [], ports: [], profiles: [], replicas: 1,
    })
  }
  const positions = layoutGraph(nodes, [])
  for (const n of nodes) n.position = positions[n.id]
  return { services, nodes, edges: [], warnings, errors: [] }
}
