// The record of what a workflow applied, kept the way `kubectl apply --prune --applyset` keeps it (KEP-3659), so
// pruning is bounded by a set written in the cluster rather than guessed from labels alone, and kubectl can
// list the members (`-l applyset.kubernetes.io/part-of=<id>`).
//
// Decisions:
// - One parent per (workflow, namespace): a ConfigMap in that namespace. Its id label, tooling and
//   contains-group-kinds annotations follow the KEP; it also carries our managed-by label and the workflow-id
//   annotation, so only this service, for this workflow, ever acts on it.
// - Members are the namespaced objects in that namespace. Namespace objects and other cluster-scoped objects
//   are applied but are never members: a namespaced parent cannot own them in the KEP's model, and deleting a
//   Namespace takes everything in it (other workflows' objects and data) with it. They are never pruned or
//   removed by this service.
// - Deleting needs three marks at once: the part-of label (the list selects on it), our managed-by label (in
//   the selector too) and this workflow's workflow-id annotation (checked on each object), and the annotation
//   must have been written by our field manager's apply. Each member is read again just before it is deleted
//   and deleted with uid/resourceVersion preconditions (ownership.ts). A user's object that merely copied the
//   marks, or one another workflow took over meanwhile, is never touched.
import { createHash } from 'node:crypto'
import { MANAGED_BY, MANAGED_BY_LABEL, WORKFLOW_ID_ANNOTATION } from '../manifests/metadata.ts'
import { builtInRank } from '../manifests/order.ts'
import type { KubeObject } from '../manifests/types.ts'
import { groupOf, type ApiDiscovery } from './api-discovery.ts'
import { k8s } from './client.ts'
import { apiFailure, apiMessage, asSpec, isNotFound, plain, unreachable, type ObjectClient } from './deploy-client.ts'
import type { PrunedObject, Schedule } from './deploy-types.ts'
import { annotationAppliedBy, ownershipOf, shownId } from './ownership.ts'

export const APPLYSET_ID_LABEL = 'applyset.kubernetes.io/id'
export const APPLYSET_PART_OF_LABEL = 'applyset.kubernetes.io/part-of'
export const APPLYSET_TOOLING_ANNOTATION = 'applyset.kubernetes.io/tooling'
export const APPLYSET_GROUP_KINDS_ANNOTATION = 'applyset.kubernetes.io/contains-group-kinds'
/** `<tool>/<version>` per the KEP; kubectl refuses to operate on a set another tool owns, which is what we want. */
export const APPLYSET_TOOLING = `${MANAGED_BY}/v1`
const PARENT_KIND = 'ConfigMap'

/** The parent's name: readable when the workflow id is a plain DNS label part, a digest otherwise. */
export function parentName(workflowId: string): string {
  const id = /^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$/.test(workflowId) ? workflowId : createHash('sha256').update(workflowId).digest('hex').slice(0, 32)
  return `workflow-${id}-applyset`
}

/** KEP-3659: "applyset-" + base64url(sha256("<name>.<namespace>.<Kind>.<group>")) + "-v1". */
export function applySetId(workflowId: string, namespace: string): string {
  const digest = createHash('sha256').update(`${parentName(workflowId)}.${namespace}.${PARENT_KIND}.`).digest('base64url')
  return `applyset-${digest}-v1`
}

/** "Deployment.apps", or "ConfigMap" for the core group (Kubernetes' GroupKind.String()). */
export function groupKind(apiVersion: string, kind: string): string {
  const group = groupOf(apiVersion)
  return group ? `${kind}.${group}` : kind
}

export function parseGroupKinds(annotation: string | undefined): string[] {
  return (annotation ?? '').split(',').map((s) => s.trim()).filter(Boolean)
}

function splitGroupKind(gk: string): { kind: string; group: string } {
  const dot = gk.indexOf('.')
  return dot < 0 ? { kind: gk, group: '' } : { kind: gk.slice(0, dot), group: gk.slice(dot + 1) }
}

export function parentObject(workflowId: string, namespace: string, groupKinds: Iterable<string>): KubeObject {
  return {
    apiVersion: 'v1', kind: PARENT_KIND,
    metadata: {
      name: parentName(workflowId), namespace,
      labels: { [APPLYSET_ID_LABEL]: applySetId(workflowId, namespace), [MANAGED_BY_LABEL]: MANAGED_BY },
      annotations: {
        [APPLYSET_TOOLING_ANNOTATION]: APPLYSET_TOOLING,
        [APPLYSET_GROUP_KINDS_ANNOTATION]: [...new Set(groupKinds)].sort().join(','),
        [WORKFLOW_ID_ANNOTATION]: workflowId,
      },
    },
  }
}

/** A copy of a member carrying the part-of label. */
export function asMember(object: KubeObject, workflowId: string, namespace: string): KubeObject {
  const copy = structuredClone(object)
  copy.metadata.labels = { ...(copy.metadata.labels ?? {}), [APPLYSET_PART_OF_LABEL]: applySetId(workflowId, namespace) }
  return copy
}

/** Carries our managed-by label and this workflow's annotation: the only objects we may delete. */
export function isOurs(object: KubeObject, workflowId: string): boolean {
  return object.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY && object.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION] === workflowId
}

export function memberKey(apiVersion: string, kind: string, namespace: string, name: string): string {
  return `${groupKind(apiVersion, kind)}|${namespace}|${name}`
}

export interface ApplySetContext {
  client: ObjectClient
  discovery: ApiDiscovery
  workflowId: string
  fieldManager: string
  schedule: Schedule
  log: (line: string) => void
}

/** An object of another owner already has the parent's name: writing ours would take it over. */
export class ParentTaken extends Error {}

/**
 * The parent in a namespace, or null when there is none (or it is not this workflow's). With `refuseForeign`
 * (before writing one), a ConfigMap of that name that is not ours throws ParentTaken instead.
 */
export async function readParent(ctx: ApplySetContext, namespace: string, options: { refuseForeign?: boolean } = {}): Promise<KubeObject | null> {
  let parent: KubeObject
  try {
    parent = plain(await ctx.client.api.read(asSpec({ apiVersion: 'v1', kind: PARENT_KIND, metadata: { name: parentName(ctx.workflowId), namespace } })))
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
  if (isOurs(parent, ctx.workflowId) && parent.metadata.labels?.[APPLYSET_ID_LABEL] === applySetId(ctx.workflowId, namespace)) return parent
  if (options.refuseForeign) {
    const owner = ownershipOf(parent, ctx.workflowId)
    const whose = owner.kind === 'workflow' ? `belongs to workflow ${shownId(owner.workflowId)}` : owner.kind === 'ours' ? 'is not an ApplySet record' : 'was not made by this service'
    throw new ParentTaken(`conflict (409): ConfigMap ${parent.metadata.name} (namespace ${namespace}), where this workflow keeps its ApplySet record, ${whose}; not changed`)
  }
  return null
}

export function recordedGroupKinds(parent: KubeObject | null): string[] {
  return parseGroupKinds(parent?.metadata.annotations?.[APPLYSET_GROUP_KINDS_ANNOTATION])
}

export async function writeParent(ctx: ApplySetContext, namespace: string, groupKinds: Iterable<string>): Promise<void> {
  const { PatchStrategy } = await k8s()
  await ctx.client.api.patch(asSpec(parentObject(ctx.workflowId, namespace, groupKinds)), undefined, undefined, ctx.fieldManager, true, PatchStrategy.ServerSideApply)
}

export interface Member { object: KubeObject; apiVersion: string; rank: number }

/** Every live member of these group-kinds that is ours. */
export async function listMembers(ctx: ApplySetContext, groupKinds: Iterable<string>, namespace: string): Promise<Member[]> {
  const selector = `${APPLYSET_PART_OF_LABEL}=${applySetId(ctx.workflowId, namespace)},${MANAGED_BY_LABEL}=${MANAGED_BY}`
  const lists = await Promise.all([...new Set(groupKinds)].map(async (gk) => {
    const { kind, group } = splitGroupKind(gk)
    if (kind === 'Namespace' && group === '') return []
    // A group no longer served took its objects with it (deleting a CRD deletes its custom resources).
    const version = await ctx.discovery.preferredVersion(group)
    if (!version) return []
    const apiVersion = group ? `${group}/${version}` : version
    const served = await ctx.discovery.resource(apiVersion, kind)
    if (!served?.namespaced) return []
    const list = await ctx.schedule(() => ctx.client.api.list(apiVersion, kind, namespace, undefined, undefined, undefined, undefined, selector))
    return list.items.map((item) => {
      const object = { ...plain(item), apiVersion, kind } as KubeObject
      return { object, apiVersion, rank: builtInRank(kind) }
    })
  }))
  return lists.flat().filter((m) => isOurs(m.object, ctx.workflowId))
}

function describeDelete(err: unknown): string {
  const f = apiFailure(err)
  return f ? apiMessage(f) : unreachable(err) ?? 'the cluster did not answer as expected'
}

/** Re-reads before each delete: a member changed between the check and the delete is checked again, this often. */
const DELETE_ATTEMPTS = 3

/**
 * Deletes one member only if it is still this workflow's: read just before, its annotation naming this workflow
 * and written by our own apply, then deleted with uid and resourceVersion preconditions, so a takeover that
 * lands after the check makes the delete fail (and the member is checked again) instead of deleting it.
 */
async function deleteIfStillOurs(ctx: ApplySetContext, m: Member, why: string): Promise<PrunedObject> {
  const { metadata } = m.object
  const spec = asSpec({ apiVersion: m.apiVersion, kind: m.object.kind, metadata: { name: metadata.name, namespace: metadata.namespace } })
  const base = { api_version: m.apiVersion, kind: m.object.kind, name: metadata.name, namespace: metadata.namespace ?? null }
  const where = `${m.object.kind} ${metadata.name} (${metadata.namespace})`
  const kept = (reason: string): PrunedObject => {
    ctx.log(`${where}: kept, ${reason}`)
    return { ...base, action: 'kept', message: `kept: ${reason}` }
  }
  for (let attempt = 1; ; attempt++) {
    let live: KubeObject
    try {
      // Not plain(): the managedFields say who wrote the annotation.
      live = JSON.parse(JSON.stringify(await ctx.client.api.read(spec))) as KubeObject
    } catch (err) {
      if (isNotFound(err)) return { ...base, action: 'deleted', message: `already gone: ${why}` }
      throw err
    }
    const owner = ownershipOf(live, ctx.workflowId)
    if (owner.kind === 'workflow') return kept(`it now belongs to workflow ${shownId(owner.workflowId)}`)
    if (owner.kind === 'unmanaged') return kept('it no longer carries this service\'s marks')
    if (!annotationAppliedBy(live, ctx.fieldManager)) return kept('its workflow annotation was last written by something other than this service\'s apply')
    const uid = live.metadata.uid as string | undefined
    const resourceVersion = live.metadata.resourceVersion as string | undefined
    try {
      await ctx.client.api.delete(spec, undefined, undefined, undefined, undefined, 'Background', { preconditions: { uid, resourceVersion } })
      ctx.log(`${where}: deleted, ${why}`)
      return { ...base, action: 'deleted', message: `deleted: ${why}` }
    } catch (err) {
      if (isNotFound(err)) return { ...base, action: 'deleted', message: `already gone: ${why}` }
      // A failed precondition: it changed (a controller's status write, or a takeover) since it was read.
      if (apiFailure(err)?.code === 409 && attempt < DELETE_ATTEMPTS) continue
      throw err
    }
  }
}

/** Deletes in reverse apply order (custom resources first, namespaces' contents before what they use). */
async function deleteMembers(ctx: ApplySetContext, members: Member[], why: string): Promise<PrunedObject[]> {
  const out: PrunedObject[] = []
  const ranks = [...new Set(members.map((m) => m.rank))].sort((a, b) => b - a)
  for (const rank of ranks) {
    const batch = members.filter((m) => m.rank === rank)
    out.push(...await Promise.all(batch.map((m) => ctx.schedule(async (): Promise<PrunedObject> => {
      try {
        return await deleteIfStillOurs(ctx, m, why)
      } catch (err) {
        const { metadata } = m.object
        const message = `not deleted: ${describeDelete(err)}`
        ctx.log(`${m.object.kind} ${metadata.name} (${metadata.namespace}): ${message}`)
        return { api_version: m.apiVersion, kind: m.object.kind, name: metadata.name, namespace: metadata.namespace ?? null, action: 'failed', message }
      }
    }))))
  }
  return out
}

async function deleteParent(ctx: ApplySetContext, namespace: string): Promise<void> {
  try {
    await ctx.client.api.delete(asSpec({ apiVersion: 'v1', kind: PARENT_KIND, metadata: { name: parentName(ctx.workflowId), namespace } }))
  } catch (err) {
    if (!isNotFound(err)) throw err
  }
}

export interface PruneInput {
  /** Namespace → member keys (memberKey) applied by this run. */
  current: Map<string, Set<string>>
  /** Namespace → group-kinds of this run's members there. */
  groupKinds: Map<string, Set<string>>
  /** Parents as read before this run widened them (namespaces of this run; null: there was none). */
  parents: Map<string, KubeObject | null>
  /** Earlier namespaces of this workflow; those without members now lose their set entirely. */
  knownNamespaces: string[]
  /** Members listed before applying (old and new kinds), per namespace of this run: not listed again. */
  listed?: Map<string, Member[]>
}

/**
 * After a fully successful run: deletes members no longer rendered, then narrows each parent to the current
 * group-kinds (only when every deletion worked, so a failed one is found again next time).
 */
export async function pruneApplySets(ctx: ApplySetContext, input: PruneInput): Promise<PrunedObject[]> {
  const out: PrunedObject[] = []
  const namespaces = [...new Set([...input.current.keys(), ...input.knownNamespaces])].sort()
  for (const namespace of namespaces) {
    const used = input.current.has(namespace)
    try {
      const parent = input.parents.has(namespace) ? input.parents.get(namespace)! : await readParent(ctx, namespace)
      if (!parent) continue
      const keep = input.current.get(namespace) ?? new Set<string>()
      const now = input.groupKinds.get(namespace) ?? new Set<string>()
      // What the run recorded before applying: the old kinds and this run's.
      const recorded = new Set([...recordedGroupKinds(parent), ...now])
      const members = input.listed?.get(namespace) ?? await listMembers(ctx, recorded, namespace)
      const stale = members.filter((m) => !keep.has(memberKey(m.apiVersion, m.object.kind, namespace, m.object.metadata.name)))
      const pruned = await deleteMembers(ctx, stale, used ? 'no longer in the workflow' : 'the workflow no longer uses this namespace')
      out.push(...pruned)
      if (pruned.some((p) => p.action === 'failed')) continue
      if (!used) await deleteParent(ctx, namespace)
      else if (now.size !== recorded.size) await writeParent(ctx, namespace, now)
    } catch (err) {
      // The set stays as recorded, so the next successful run tries again.
      ctx.log(`prune in namespace ${namespace} stopped: ${describeDelete(err)}`)
    }
  }
  return out
}

/** Every member of the workflow's sets in these namespaces, in reverse apply order, then the parents. */
export async function removeApplySets(ctx: ApplySetContext, namespaces: string[]): Promise<PrunedObject[]> {
  const found: Array<{ namespace: string; members: Member[] }> = []
  for (const namespace of [...new Set(namespaces)].sort()) {
    const parent = await readParent(ctx, namespace)
    if (parent) found.push({ namespace, members: await listMembers(ctx, recordedGroupKinds(parent), namespace) })
  }
  const out = await deleteMembers(ctx, found.flatMap((f) => f.members), 'the workflow was deleted')
  for (const { namespace } of found) {
    if (out.some((p) => p.namespace === namespace && p.action === 'failed')) continue
    await deleteParent(ctx, namespace)
    ctx.log(`ApplySet record in namespace ${namespace} deleted`)
  }
  return out
}
