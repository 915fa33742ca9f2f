// Which workflow an object in the cluster belongs to. Every user of a shared cluster applies with the same
// field manager, so server-side apply itself never tells one user's workflow from another's: the workflow-id
// annotation does, and it is read before any write and again before any delete.
//
// Decisions:
// - An object is this workflow's when it carries our managed-by label and this workflow's annotation. One that
//   names another workflow belongs to that workflow; one without both marks was not made by this service
//   (kubectl, a Helm chart, another tool) and is "unmanaged". Neither is changed unless the run asks to adopt.
// - Deleting needs more: the annotation must also have been written by our last apply (our field manager's
//   Apply entry owns it), so an object whose annotation someone rewrote by hand is left alone.
import { MANAGED_BY, MANAGED_BY_LABEL, WORKFLOW_ID_ANNOTATION } from '../manifests/metadata.ts'
import type { KubeObject } from '../manifests/types.ts'

export type Ownership =
  | { kind: 'ours' }
  | { kind: 'workflow'; workflowId: string }
  | { kind: 'unmanaged' }

export function ownershipOf(object: KubeObject, workflowId: string): Ownership {
  const managed = object.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY
  const owner = object.metadata?.annotations?.[WORKFLOW_ID_ANNOTATION]
  if (!managed || typeof owner !== 'string' || owner === '') return { kind: 'unmanaged' }
  return owner === workflowId ? { kind: 'ours' } : { kind: 'workflow', workflowId: owner }
}

/**
 * The id as a message shows it: annotation values come from the cluster, where anyone with access may write up
 * to 256 KiB of anything, so an id that does not look like one is quoted and cut.
 */
export function shownId(id: string): string {
  return /^[A-Za-z0-9._-]{1,64}$/.test(id) ? id : `${JSON.stringify(id.slice(0, 64))}${id.length > 64 ? '…' : ''}`
}

/** The other owner's workflow id, or null when the object was not made by this service. */
export function otherOwner(o: Exclude<Ownership, { kind: 'ours' }>): string | null {
  return o.kind === 'workflow' ? o.workflowId : null
}

interface ManagedFieldsEntry { manager?: string; operation?: string; subresource?: string; fieldsV1?: Record<string, unknown> }

/**
 * True when our field manager's Apply entry owns the workflow-id annotation: the value there was written by
 * one of our applies, not by `kubectl annotate` or an edit (those take the field over).
 */
export function annotationAppliedBy(object: KubeObject, fieldManager: string): boolean {
  const entries = (object.metadata?.managedFields ?? []) as ManagedFieldsEntry[]
  return entries.some((e) => {
    if (e.manager !== fieldManager || e.operation !== 'Apply' || (e.subresource ?? '') !== '') return false
    const meta = e.fieldsV1?.['f:metadata'] as Record<string, unknown> | undefined
    const annotations = meta?.['f:annotations'] as Record<string, unknown> | undefined
    return annotations !== undefined && `f:${WORKFLOW_ID_ANNOTATION}` in annotations
  })
}

/** `Service web (namespace shop)` */
export function describeObject(object: { kind: string; name: string; namespace: string | null }): string {
  return `${object.kind} ${object.name}${object.namespace ? ` (namespace ${object.namespace})` : ''}`
}

/** The node's message when an existing object belongs to someone else. Names a workflow id, never a user. */
export function ownershipConflict(what: string, o: Exclude<Ownership, { kind: 'ours' }>, adoptRefused: boolean): string {
  const whose = o.kind === 'workflow'
    ? `belongs to workflow ${shownId(o.workflowId)}`
    : 'exists and was not made by this service'
  if (adoptRefused) {
    return o.kind === 'workflow'
      ? `conflict (409): ${what} ${whose}; not changed: adopt is allowed only for the owner of workflow ${shownId(o.workflowId)} or the cluster's owner`
      : `conflict (409): ${what} ${whose}; not changed: only the cluster's owner may adopt an object this service did not make`
  }
  return `conflict (409): ${what} ${whose}; not changed. Rename the node, or run with adopt: true to take it over (${o.kind === 'workflow' ? 'allowed for the owner of that workflow or the cluster\'s owner' : 'allowed for the cluster\'s owner'})`
}

export function adoptedNote(o: Exclude<Ownership, { kind: 'ours' }>): string {
  return o.kind === 'workflow' ? `adopted from workflow ${shownId(o.workflowId)}` : 'adopted (it was not made by this service)'
}
