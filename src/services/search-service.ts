// Global search: the caller's workflows, the clusters they reach, the (global) registries and the palette's
// templates and the (global) plugins, the caller's tracked resources (by name) and image builds (by image name, tag or repository). The term is matched literally, case-insensitively, and each group is capped.
import type { Collection, Db } from 'mongodb'
import { BadRequest } from '../errors.ts'
import { searchFilter } from '../repositories/pagination.ts'
import { toWorkflow, type WorkflowDoc } from '../repositories/workflows.ts'
import { BuildRepository } from '../repositories/builds.ts'
import type { NodeTemplate } from './node-catalogue.ts'
import type { ClusterRepository } from '../repositories/clusters.ts'
import type { RegistryService } from './registry-service.ts'
import type { ResourceRepository } from '../repositories/resources.ts'

export interface WorkflowHit { id: string; name: string; description: string; status: string; updated_at: string }
export interface TemplateHit { id: string; name: string; display_name: string; category: string; description: string }
export interface NamedHit { id: string; name: string }
export interface BuildHit { id: string; name: string; status: string; image_ref: string | null; created_at: string }
export interface ResourceHit { id: string; name: string; kind: string; namespace: string | null; cluster: string; status: string }
export interface SearchResults {
  workflows: WorkflowHit[]
  clusters: NamedHit[]
  resources: ResourceHit[]
  plugins: NamedHit[]
  templates: TemplateHit[]
  registries: NamedHit[]
  builds: BuildHit[]
}

export class SearchService {
  private readonly workflows: Collection<WorkflowDoc>
  private readonly builds: BuildRepository
  constructor(
    db: Db, private readonly templates: () => NodeTemplate[], private readonly clusters: ClusterRepository, private readonly registries?: RegistryService,
    private readonly plugins?: { search(q: string, limit: number): Promise<NamedHit[]> },
    private readonly resources?: ResourceRepository,
  ) {
    this.workflows = db.collection<WorkflowDoc>('workflows')
    this.builds = new BuildRepository(db)
  }

  async search(ownerId: string, q: string, limit: number): Promise<SearchResults> {
    // An empty term matches every document: refused, not answered with everything.
    if (!q.trim()) throw new BadRequest('q must contain a non-space character')
    const [docs, clusters, registries, plugins, resources, builds] = await Promise.all([
      this.workflows.find({ owner_id: ownerId, ...searchFilter<WorkflowDoc>(q, ['name', 'description']) }).sort({ updated_at: -1, _id: -1 }).limit(limit).toArray(),
      this.clusters.search(ownerId, searchFilter(q, ['name', 'display_name', 'description']), limit),
      // Registries are global: every signed-in user may see them.
      this.registries?.search(q, limit) ?? [],
      // Plugins are global too.
      this.plugins?.search(q, limit) ?? [],
      this.resources?.search(ownerId, q, limit) ?? [],
      this.builds.search(ownerId, q, limit),
    ])
    const needle = q.trim().toLowerCase()
    const templates = this.templates()
      .filter((t) => [t.name, t.display_name, t.description, ...t.tags].some((f) => f.toLowerCase().includes(needle)))
      .slice(0, limit)
      .map(({ id, name, display_name, category, description }) => ({ id, name, display_name, category, description }))
    return {
      workflows: docs.map(toWorkflow).map(({ id, name, description, status, updated_at }) => ({ id, name, description, status, updated_at })),
      clusters: clusters.map((c) => ({ id: c._id, name: c.name })),
      resources: resources.map((r) => ({ id: r._id, name: r.name, kind: r.kind, namespace: r.namespace, cluster: r.cluster, status: r.status })),
      plugins,
      templates,
      registries,
      builds: builds.map((b) => ({ id: b.id, name: `${b.image_name}:${b.image_tag}`, status: b.status, image_ref: b.image_ref, created_at: b.created_at })),
    }
  }
}
