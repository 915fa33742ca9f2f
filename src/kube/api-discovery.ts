// Which kinds the cluster serves, asked once per API version and remembered for one deploy call: a plugin node
// whose CRD is not installed must fail with a message naming the operator, not with a bare 404, and the
// ApplySet needs to know which kinds are namespaced and which version to list a recorded group-kind with.
import { k8s } from './client.ts'
import { apiFailure, type ObjectClient } from './deploy-client.ts'

export interface ServedResource { plural: string; namespaced: boolean }

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? '' : apiVersion.slice(0, slash)
}

export function versionOf(apiVersion: string): string {
  return apiVersion.slice(apiVersion.indexOf('/') + 1)
}

export class ApiDiscovery {
  private readonly resources = new Map<string, Promise<ServedResource | null>>()
  private groups?: Promise<Map<string, string>>

  constructor(private readonly client: ObjectClient) {}

  /** The resource serving `kind` in `apiVersion`, or null when the cluster does not serve it. */
  resource(apiVersion: string, kind: string): Promise<ServedResource | null> {
    const key = `${apiVersion}|${kind}`
    let found = this.resources.get(key)
    if (!found) {
      found = this.client.api.discover(apiVersion, kind).then(
        (r) => (r ? { plural: r.name, namespaced: r.namespaced } : null),
        (err: unknown) => {
          // 404: the whole group-version is absent (no CRD for it). Anything else is not an answer: not cached.
          if (apiFailure(err)?.code === 404) return null
          this.resources.delete(key)
          throw err
        },
      )
      this.resources.set(key, found)
    }
    return found
  }

  /** The version the cluster prefers for a group ('' is the core group), or null when the group is not served. */
  async preferredVersion(group: string): Promise<string | null> {
    if (group === '') return 'v1'
    this.groups ??= (async () => {
      const { ApisApi } = await k8s()
      const list = await new ApisApi(this.client.configuration).getAPIVersions()
      return new Map(list.groups.map((g) => [g.name, g.preferredVersion?.version ?? g.versions[0]?.version ?? '']))
    })()
    this.groups.catch(() => { this.groups = undefined })
    return (await this.groups).get(group) || null
  }
}
