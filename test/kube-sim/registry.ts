import { allVerbs, apiVersionOf, builtinResources, type ResourceType } from './resources.ts'
import type { JsonObject, KObject } from './util.ts'

/** Served resources: the built-ins plus whatever established CRDs add, looked up the ways the server needs. */
export class Registry {
  private readonly builtins = builtinResources
  private custom: ResourceType[] = []
  /** Bumped whenever the served set changes, so discovery documents can be re-hashed. */
  generation = 0

  all(): ResourceType[] { return [...this.builtins, ...this.custom] }

  /** Group → versions in preference order, core ('') first, custom groups after built-ins. */
  groups(): { group: string; versions: string[] }[] {
    const out: { group: string; versions: string[] }[] = []
    for (const rt of this.all()) {
      let g = out.find((x) => x.group === rt.group)
      if (!g) { g = { group: rt.group, versions: [] }; out.push(g) }
      if (!g.versions.includes(rt.version)) g.versions.push(rt.version)
    }
    // Metrics is an aggregated API in a real cluster and is listed last; keep it there.
    out.sort((a, b) => Number(a.group === 'metrics.k8s.io') - Number(b.group === 'metrics.k8s.io'))
    return out
  }

  resourcesIn(group: string, version: string): ResourceType[] {
    return this.all().filter((r) => r.group === group && r.version === version)
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.all().find((r) => r.group === group && r.version === version && r.plural === plural)
  }

  /** Lookup by kind for ownerReferences and SSA; any served version of the group will do. */
  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion]
    const all = this.all().filter((r) => r.group === group && r.kind === kind && !r.virtual)
    return all.find((r) => r.version === version) ?? all[0]
  }

  byGroupPlural(group: string, plural: string): ResourceType | undefined {
    return this.all().find((r) => r.group === group && r.plural === plural && !r.virtual)
  }

  /** Re-derive the custom resource types from the current set of CRDs. */
  setCrds(crds: KObject[]): void {
    const next: ResourceType[] = []
    for (const crd of crds) {
      if (crd.metadata.deletionTimestamp) continue
      const spec = crd.spec as JsonObject
      const names = spec.names as JsonObject
      for (const v of (spec.versions ?? []) as JsonObject[]) {
        if (v.served === false) continue
        const sub: ResourceType['subresources'] = {}
        if (v.subresources?.status) sub.status = { kind: names.kind, verbs: ['get', 'patch', 'update'] }
        if (v.subresources?.scale) sub.scale = { kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] }
        next.push({
          group: spec.group, version: v.name, kind: names.kind, listKind: names.listKind ?? `${names.kind}List`,
          plural: names.plural, singular: names.singular ?? names.kind.toLowerCase(), namespaced: spec.scope !== 'Cluster',
          shortNames: names.shortNames ?? [], categories: names.categories ?? [], verbs: allVerbs, subresources: sub, generation: true,
          crd: { name: crd.metadata.name!, printerColumns: v.additionalPrinterColumns ?? [], scale: v.subresources?.scale },
        })
      }
    }
    const sig = (l: ResourceType[]) => JSON.stringify(l.map((r) => [apiVersionOf(r), r.plural, r.kind, r.namespaced, r.shortNames, r.categories, Object.keys(r.subresources), r.crd?.printerColumns]))
    if (sig(next) !== sig(this.custom)) {
      this.custom = next
      this.generation++
    }
  }
}
