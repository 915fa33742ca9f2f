// Node diagnostics and fixes (API.md §9).
import { Type } from 'typebox'
import { StringEnum, Timestamp } from './common.ts'
import { FIX_TYPES } from '../src/services/diagnostics/types.ts'

const FIX_TYPE_TEXT = 'selector-mismatch: the node\'s selector replaced by its edge to the workload; target-port: the service targets the connected workload\'s container port; dns-name: the node renamed to a valid DNS label (and the nodes naming it updated); missing-namespace: the node put in the namespace its connected nodes (or the other nodes) use; image-tag-latest: the image pinned to the digest its running pods report (409 while none is known); resource-requests: CPU and memory requests added (100m and 128Mi, or the limit when lower; for an autoscaler, on its scale target)'

export const FixTypeSchema = StringEnum(FIX_TYPES, { description: FIX_TYPE_TEXT })

const NodeId = Type.String({ minLength: 1, maxLength: 200, description: 'a canvas node id of the workflow' })
export const NodeParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), nodeId: NodeId })
export const FixTemplateParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), nodeId: NodeId, fixType: FixTypeSchema })
export const FixBody = Type.Object({ fix_type: FixTypeSchema }, { additionalProperties: false })

export const Check = Type.Object({
  name: Type.String({ description: 'what was checked: name, namespace, image, resources, selector, target-port, ports, backend, scale-target, metrics, usage, manifest, deployment; live: cluster, crd, exists, ready, selector-pods, endpoints, container-ports, events' }),
  status: StringEnum(['pass', 'warning', 'error']),
  message: Type.String({ description: 'what was found, naming the field, edge or object' }),
  suggestion: Type.Optional(Type.String({ description: 'what to do about it (every warning and error has one)' })),
  fix_type: Type.Optional(StringEnum(FIX_TYPES, { description: 'the fix that resolves it, when one applies now' })),
}, { additionalProperties: false })

export const NodeDiagnostics = Type.Object({
  node_id: Type.String(),
  kind: Type.String({ description: 'the Kubernetes kind the node renders (a plugin node\'s custom kind once its plugin is known)' }),
  overall_status: StringEnum(['healthy', 'warning', 'error'], { description: 'error if any check failed, warning if any warned' }),
  checks: Type.Array(Check, { description: 'static checks first; then live checks against the cluster and namespace of the last run (or one `deployment` check saying it was never deployed, or one `cluster` warning when the cluster could not be read)' }),
  checked_at: Timestamp,
}, { additionalProperties: false })

export const GraphChange = Type.Object({
  node_id: Type.String({ description: 'the node edited (a fix may also update nodes that refer to this one)' }),
  path: Type.String({ description: 'inside the node, e.g. data.image or data.ports[0].targetPort' }),
  old: Type.Unknown({ description: 'the value before; null when absent' }),
  new: Type.Unknown({ description: 'the value after; null means the key is removed' }),
}, { additionalProperties: false })

export const FixTemplate = Type.Object({
  fix_type: FixTypeSchema,
  description: Type.String(),
  changes: Type.Array(GraphChange),
  preview_yaml: Type.String({ description: 'the objects of the changed nodes after the edit, as the next run would apply them; secret values never shown' }),
}, { additionalProperties: false })

export const FixResult = Type.Object({
  workflow: Type.Ref('Workflow'),
  changes: Type.Array(GraphChange),
}, { additionalProperties: false })
