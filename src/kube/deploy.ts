// The apply engine: rendered objects → server-side apply, rank by rank in dependency order, objects of one
// rank concurrently, each with its own outcome. One object's failure never hides another's; a cluster that
// cannot be reached stops the run at once with one message rather than a hundred timeouts.
import type { KubeConfig } from '@kubernetes/client-node'
import { MANAGED_BY } from '../manifests/metadata.ts'
import { builtInRank } from '../manifests/order.ts'
import type { KubeObject, RenderedObject } from '../manifests/types.ts'
import { ApiDiscovery, groupOf, versionOf, type ServedResource } from './api-discovery.ts'
import { asMember, groupKind, listMembers, memberKey, ParentTaken, pruneApplySets, readParent, recordedGroupKinds, removeApplySets, writeParent, type ApplySetContext, type Member } from './applyset.ts'
import { k8s } from './client.ts'
import { apiFailure, apiMessage, asSpec, isNotFound, objectClient, plain, unreachable, type ApiFailure, type ObjectClient } from './deploy-client.ts'
import { limiter, type AppliedObject, type DeployOptions, type DeployResult, type PrunedObject, type Schedule } from './deploy-types.ts'
import { describeClusterError } from './upstream-errors.ts'
import { diffObjects, isEmptyDiff, sameObject } from './object-diff.ts'
import { adoptedNote, describeObject, otherOwner, ownershipConflict, ownershipOf } from './ownership.ts'

export * from './deploy-types.ts'

/** Field manager of every apply: the managed-by label value, so `kubectl get -o yaml` shows who owns what. */
export const FIELD_MANAGER = MANAGED_BY
export const DEFAULT_CONCURRENCY = 8

export function defaultMissingApiMessage(object: KubeObject): string {
  const group = groupOf(object.apiVersion)
  return group
    ? `the cluster does not serve ${object.kind} (${group}/${versionOf(object.apiVersion)}): install the operator that provides the ${group} API (its CustomResourceDefinition), then run again`
    : `the cluster does not serve ${object.kind} (core/${versionOf(object.apiVersion)})`
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/** "… fields .spec.replicas managed by "kubectl-edit" …": who else owns what we tried to set. */
function conflictMessage(f: ApiFailure): string | null {
  const causes = (f.status.details?.causes ?? []).filter((c) => c.reason === 'FieldManagerConflict' || /conflict with/.test(c.message ?? ''))
  const managers = new Set<string>()
  const fields: string[] = []
  for (const c of causes) {
    const m = /conflict with "([^"]+)"/.exec(c.message ?? '')
    if (m) managers.add(m[1])
    if (c.field) fields.push(c.field)
  }
  if (managers.size === 0) {
    // No causes: read the Status message ("Apply failed with 1 conflict: conflict with "x" using apps/v1: .spec.replicas").
    const text = f.status.message ?? ''
    if (!/^Apply failed with/.test(text)) return null
    for (const m of text.matchAll(/conflicts? with "([^"]+)"/g)) managers.add(m[1])
    for (const m of text.matchAll(/(?:^|[\s:-])(\.[A-Za-z][^\s,]*)/g)) fields.push(m[1])
  }
  const who = [...managers].map((m) => JSON.stringify(m)).join(', ') || 'another field manager'
  const shown = fields.slice(0, 5).join(', ') + (fields.length > 5 ? ` and ${fields.length - 5} more` : '')
  return `conflict: ${shown ? `field${fields.length === 1 ? '' : 's'} ${shown} ${fields.length === 1 ? 'is' : 'are'}` : 'fields are'} managed by ${who}; run with force: true to take ${fields.length === 1 ? 'it' : 'them'} over`
}

/**
 * Batches of consecutive objects of one rank and dependency wave; a rank never goes down, so the caller's
 * order is kept.
 */
function batches(objects: RenderedObject[]): number[][] {
  const out: number[][] = []
  let rank = -1
  let wave = -1
  objects.forEach(({ object, wave: w = 0 }, i) => {
    const r = Math.max(rank, builtInRank(object.kind))
    if (r !== rank || w !== wave || out.length === 0) out.push([])
    rank = r
    wave = w
    out[out.length - 1].push(i)
  })
  return out
}

function describeFailure(err: unknown): string {
  const f = apiFailure(err)
  if (f) return (f.code === 409 && conflictMessage(f)) || apiMessage(f)
  return describeClusterError(err)
}

interface Planned {
  served: ServedResource | null
  discoveryError?: string
  namespace: string | null
  member: boolean
}

export async function deploy(kc: KubeConfig, objects: RenderedObject[], opts: DeployOptions): Promise<DeployResult> {
  const started = Date.now()
  const redact = opts.redact ?? ((s: string) => s)
  const log = (line: string) => opts.log?.(oneLine(redact(line)))
  const schedule: Schedule = opts.schedule ?? limiter(DEFAULT_CONCURRENCY)
  const dryRun = opts.dryRun === true
  const results: AppliedObject[] = new Array(objects.length)
  let fatal: string | null = null

  const finish = (i: number, r: AppliedObject): void => {
    r.message = oneLine(redact(r.message))
    results[i] = r
    log(`${r.kind} ${r.name}${r.namespace ? ` (${r.namespace})` : ''}: ${r.message}`)
    opts.onObject?.(r)
  }
  const base = (i: number, namespace: string | null): AppliedObject => {
    const { node_id, object } = objects[i]
    return {
      node_id, api_version: object.apiVersion, kind: object.kind, name: object.metadata.name, namespace,
      action: 'failed', message: '', uid: null, resource_version: null, labels: { ...(object.metadata.labels ?? {}) },
    }
  }
  const noteFatal = (err: unknown): string | null => {
    const why = unreachable(err) ?? (apiFailure(err)?.code === 401 ? describeClusterError(err) : null)
    if (why) fatal ??= why
    return why
  }

  let client: ObjectClient | undefined
  try {
    client = await objectClient(kc, opts.requestTimeoutMs)
  } catch (err) {
    fatal = `cannot use the cluster's configuration: ${describeClusterError(err)}`
  }
  try {
    const discovery = client ? new ApiDiscovery(client) : undefined
    const { PatchStrategy } = await k8s()

    // Discovery first, for every kind at once: a missing CRD is known before anything is written, and an
    // unreachable cluster is found by the first few requests.
    const served = new Map<string, ServedResource | null | { error: string }>()
    if (discovery && !fatal) {
      const kinds = [...new Set(objects.map(({ object }) => `${object.apiVersion}|${object.kind}`))]
      await Promise.all(kinds.map(async (key) => {
        const [apiVersion, kind] = key.split('|')
        try {
          served.set(key, await schedule(() => discovery.resource(apiVersion, kind)))
        } catch (err) {
          served.set(key, { error: noteFatal(err) ?? describeFailure(err) })
        }
      }))
    }
    const plans: Planned[] = objects.map(({ object }) => {
      const found = served.get(`${object.apiVersion}|${object.kind}`)
      if (found && 'error' in found) return { served: null, discoveryError: found.error, namespace: object.metadata.namespace ?? null, member: false }
      const namespaced = found ? found.namespaced : typeof object.metadata.namespace === 'string'
      const namespace = namespaced ? object.metadata.namespace ?? 'default' : null
      return { served: found ?? null, namespace, member: namespaced && found != null }
    })

    const current = new Map<string, Set<string>>()
    const groupKinds = new Map<string, Set<string>>()
    plans.forEach((p, i) => {
      if (!p.member || !p.namespace) return
      const { object } = objects[i]
      if (!current.has(p.namespace)) { current.set(p.namespace, new Set()); groupKinds.set(p.namespace, new Set()) }
      current.get(p.namespace)!.add(memberKey(object.apiVersion, object.kind, p.namespace, object.metadata.name))
      groupKinds.get(p.namespace)!.add(groupKind(object.apiVersion, object.kind))
    })

    const ctx: ApplySetContext | undefined = client && discovery
      ? { client, discovery, workflowId: opts.workflowId, fieldManager: FIELD_MANAGER, schedule, log }
      : undefined
    // Namespace → why its objects are not applied (its Namespace object or its ApplySet record failed).
    const blocked = new Map<string, { action: 'failed' | 'skipped'; message: string }>()
    const dryNewNamespaces = new Set<string>()
    // Namespaces this run created: nothing can exist in them yet, so nothing in them is read first.
    const freshNamespaces = new Set<string>()
    const parents = new Map<string, KubeObject | null>()
    // Live members found by listing the set (one request per kind instead of one GET per object).
    const listed = new Map<string, Member[]>()
    const listedLive = new Map<string, KubeObject>()
    let setsPrepared = false

    // Before any member is written: read each namespace's set (its parent, and its members by one list per
    // kind), then record the union of old and new kinds, so a run that stops half-way still leaves every
    // member findable by the next prune.
    const prepareSets = async () => {
      setsPrepared = true
      if (!ctx) return
      await Promise.all([...groupKinds].map(async ([ns, kinds]) => {
        if (fatal || blocked.has(ns) || dryNewNamespaces.has(ns)) return
        try {
          const parent = freshNamespaces.has(ns) ? null : await schedule(() => readParent(ctx, ns, { refuseForeign: true }))
          parents.set(ns, parent)
          const recorded = recordedGroupKinds(parent)
          const union = new Set([...recorded, ...kinds])
          if (parent) {
            const members = await listMembers(ctx, union, ns)
            listed.set(ns, members)
            for (const m of members) listedLive.set(memberKey(m.apiVersion, m.object.kind, ns, m.object.metadata.name), m.object)
          }
          if (!dryRun && (!parent || union.size !== recorded.length)) await schedule(() => writeParent(ctx, ns, union))
        } catch (err) {
          if (err instanceof ParentTaken) {
            blocked.set(ns, { action: 'failed', message: `not applied: ${err.message}` })
            return
          }
          const why = noteFatal(err) ?? describeFailure(err)
          if (dryRun) return // nothing is written in a dry run: each object is simply read on its own
          blocked.set(ns, { action: 'failed', message: `not applied: the ApplySet record (used to prune later) could not be written in namespace ${ns}: ${why}` })
        }
      }))
    }

    // One answer per other owner for the whole run (the caller's check may read a database).
    const adoptAnswers = new Map<string | null, Promise<boolean>>()
    const mayAdopt = (owner: string | null): Promise<boolean> => {
      let answer = adoptAnswers.get(owner)
      if (!answer) {
        answer = Promise.resolve().then(() => opts.mayAdopt?.(owner) ?? false).catch(() => false)
        adoptAnswers.set(owner, answer)
      }
      return answer
    }

    const applyOne = async (i: number): Promise<void> => {
      const { node_id, object } = objects[i]
      const plan = plans[i]
      const r = base(i, plan.namespace)
      if (fatal) return finish(i, { ...r, message: `not applied: ${fatal}` })
      if (plan.discoveryError) return finish(i, { ...r, message: `not applied: ${plan.discoveryError}` })
      if (!plan.served) return finish(i, { ...r, message: (opts.missingApiMessage ?? defaultMissingApiMessage)(object, node_id) })
      const block = plan.namespace ? blocked.get(plan.namespace) : undefined
      if (block) return finish(i, { ...r, ...block })

      const body = plan.member && plan.namespace ? asMember(object, opts.workflowId, plan.namespace) : structuredClone(object)
      if (plan.namespace) body.metadata.namespace = plan.namespace
      const secret = object.kind === 'Secret' && object.apiVersion === 'v1'
      if (dryRun && plan.namespace && dryNewNamespaces.has(plan.namespace)) {
        // Its namespace does not exist yet, so the server cannot dry-run it; it would be created.
        const diff = diffObjects(undefined, body, { secret, redact })
        return finish(i, { ...r, action: 'created', message: 'dry run: would be created (with its namespace)', labels: body.metadata.labels ?? {}, diff })
      }
      try {
        const ref = { apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata.name, ...(plan.namespace && { namespace: plan.namespace }) } }
        const found = plan.member && plan.namespace ? listedLive.get(memberKey(object.apiVersion, object.kind, plan.namespace, object.metadata.name)) : undefined
        // Listed in the group's preferred version: another version's shape would not compare, so read it.
        let live = found?.apiVersion === object.apiVersion ? found : undefined
        if (!live && !(plan.namespace && freshNamespaces.has(plan.namespace))) {
          try {
            live = plain(await client!.api.read(asSpec(ref)))
          } catch (err) {
            if (!isNotFound(err)) throw err
          }
        }
        if (live && object.kind === 'Namespace' && object.apiVersion === 'v1') {
          // An existing namespace is left as it is: it may hold other workflows' objects, and re-applying it
          // would only move its workflow annotation back and forth between the workflows sharing it.
          if ((live.status as { phase?: string } | undefined)?.phase === 'Terminating') {
            return finish(i, { ...r, message: `namespace ${object.metadata.name} is being deleted; run again once it is gone` })
          }
          const kept = { action: 'unchanged' as const, message: dryRun ? 'dry run: exists; left as it is' : 'exists; left as it is', labels: live.metadata.labels ?? {}, live }
          return finish(i, { ...r, ...kept, uid: (live.metadata.uid as string | undefined) ?? null, resource_version: (live.metadata.resourceVersion as string | undefined) ?? null, ...(dryRun && { diff: { changed: [], added: [], removed: [] } }) })
        }
        // Another workflow's object, or one this service did not make: not changed unless adopting is asked
        // for and allowed (a dry run reports the same).
        let adopted: string | null = null
        const owner = live ? ownershipOf(live, opts.workflowId) : { kind: 'ours' as const }
        if (owner.kind !== 'ours') {
          const what = describeObject({ kind: object.kind, name: object.metadata.name, namespace: plan.namespace })
          if (!opts.adopt) return finish(i, { ...r, message: ownershipConflict(what, owner, false) })
          if (!(await mayAdopt(otherOwner(owner)))) return finish(i, { ...r, message: ownershipConflict(what, owner, true) })
          adopted = adoptedNote(owner)
        }
        const note = (message: string) => (adopted ? `${message} (${adopted})` : message)
        const applied = plain(await client!.api.patch(asSpec(body), undefined, dryRun ? 'All' : undefined, FIELD_MANAGER, opts.force ? true : undefined, PatchStrategy.ServerSideApply))
        const result: AppliedObject = { ...r, labels: applied.metadata.labels ?? {}, live: applied }
        if (dryRun) {
          const diff = diffObjects(live ?? undefined, live ? applied : body, { secret, redact })
          const action = !live ? 'created' : isEmptyDiff(diff) ? 'unchanged' : 'configured'
          if (action === 'created' && object.kind === 'Namespace' && !plan.namespace) dryNewNamespaces.add(object.metadata.name)
          const counts = `${diff.changed.length} changed, ${diff.added.length} added, ${diff.removed.length} removed`
          const message = action === 'created' ? 'dry run: would be created' : action === 'unchanged' ? 'dry run: no change' : `dry run: would be configured (${counts})`
          return finish(i, { ...result, action, message: note(message), diff, uid: (live?.metadata.uid as string | undefined) ?? null, resource_version: (live?.metadata.resourceVersion as string | undefined) ?? null })
        }
        if (!live && object.kind === 'Namespace' && !plan.namespace) freshNamespaces.add(object.metadata.name)
        const version = (applied.metadata.resourceVersion as string | undefined) ?? null
        // A controller writing status between our read and our apply moves resourceVersion too: compare content.
        const action = !live ? 'created' : live.metadata.resourceVersion === version || sameObject(live, applied) ? 'unchanged' : 'configured'
        const message = action === 'created' ? 'created' : action === 'unchanged' ? 'unchanged: the cluster already matches' : 'configured'
        return finish(i, { ...result, action, message: note(message), uid: (applied.metadata.uid as string | undefined) ?? null, resource_version: version })
      } catch (err) {
        // In flight when the cluster went away (or timed out): the write may or may not have landed.
        const why = noteFatal(err)
        return finish(i, { ...r, message: why ? `no answer: ${why}` : describeFailure(err) })
      }
    }

    const all = batches(objects)
    for (const [b, batch] of all.entries()) {
      // Dependents (a later wave of the same rank) start once what they depend on is ready.
      const previous = all[b - 1]
      if (previous && opts.awaitReady && !fatal && (objects[batch[0]].wave ?? 0) > (objects[previous[0]].wave ?? 0)) {
        await opts.awaitReady(previous.map((i) => results[i]).filter((r) => r.action !== 'failed' && r.action !== 'skipped'))
      }
      if (!setsPrepared && batch.some((i) => plans[i].member)) await prepareSets()
      await Promise.all(batch.map((i) => (fatal ? applyOne(i) : schedule(() => applyOne(i)))))
      for (const i of batch) {
        const r = results[i]
        if (r.kind === 'Namespace' && r.api_version === 'v1' && r.action === 'failed' && !blocked.has(r.name)) {
          blocked.set(r.name, { action: 'skipped', message: `skipped: its namespace ${r.name} could not be applied (see node ${r.node_id})` })
        }
      }
    }

    let pruned: PrunedObject[] = []
    const succeeded = results.every((r) => r.action === 'created' || r.action === 'configured' || r.action === 'unchanged')
    if (!dryRun && opts.prune !== false && !fatal && succeeded && ctx) {
      pruned = await pruneApplySets(ctx, { current, groupKinds, parents, listed, knownNamespaces: opts.knownNamespaces ?? [] })
      pruned = pruned.map((p) => ({ ...p, message: oneLine(redact(p.message)) }))
    } else if (!dryRun && opts.prune !== false && !fatal && !succeeded) {
      log('prune skipped: not every object was applied')
    }

    const count = (a: string) => results.filter((r) => r.action === a).length
    log(`${dryRun ? 'dry run' : 'run'} finished in ${Date.now() - started} ms: ${count('created')} created, ${count('configured')} configured, ${count('unchanged')} unchanged, ${count('failed')} failed, ${count('skipped')} skipped${pruned.length ? `, ${pruned.filter((p) => p.action === 'deleted').length} pruned` : ''}`)
    return { objects: results, pruned, namespaces: [...current.keys()].sort(), error: fatal ? oneLine(redact(fatal)) : null }
  } finally {
    client?.close()
  }
}

/** DELETE /workflows/:id?delete_resources=true: the workflow's ApplySet members, reverse apply order, then the parents. */
export async function removeWorkflowObjects(
  kc: KubeConfig,
  opts: { workflowId: string; namespaces: string[]; schedule?: Schedule; log?: (line: string) => void; requestTimeoutMs?: number },
): Promise<PrunedObject[]> {
  const client = await objectClient(kc, opts.requestTimeoutMs)
  try {
    const ctx: ApplySetContext = {
      client, discovery: new ApiDiscovery(client), workflowId: opts.workflowId, fieldManager: FIELD_MANAGER,
      schedule: opts.schedule ?? limiter(DEFAULT_CONCURRENCY), log: (line) => opts.log?.(oneLine(line)),
    }
    return await removeApplySets(ctx, opts.namespaces)
  } finally {
    client.close()
  }
}
