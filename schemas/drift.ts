// Drift reports (API.md §12): what differs between what the service applied and what is live.
import { Type } from 'typebox'
import { Timestamp } from './common.ts'

export const DriftFieldSchema = Type.Object({
  path: Type.String({ description: 'a leaf path as dry-run diffs name them, e.g. `spec.template.spec.containers[name=web].image`, `spec.replicas`, `metadata.labels.team`, `metadata.labels["example.com/owner"]`' }),
  applied: Type.Unknown({ description: 'the value the last run left (as the API server answered the apply); null for a label someone else added. "(hidden)" for a Secret\'s data and run-time trigger values' }),
  live: Type.Unknown({ description: 'the value in the cluster now; null when the field is gone. "(hidden)" where `applied` is' }),
}, { additionalProperties: false })

export const DriftObjectSchema = Type.Object({
  cluster_id: Type.String({ description: 'the cluster the object is on' }),
  kind: Type.String(),
  name: Type.String(),
  namespace: Type.Union([Type.String(), Type.Null()]),
  missing: Type.Boolean({ description: 'true: the object was deleted from the cluster (`fields` is then empty)' }),
  fields: Type.Array(DriftFieldSchema, { description: 'the fields that differ, sorted by path' }),
}, { additionalProperties: false })

export const DriftReportSchema = Type.Object({
  nodes: Type.Array(Type.Object({
    node_id: Type.String(),
    objects: Type.Array(DriftObjectSchema, { description: 'only the node\'s drifted objects' }),
  }, { additionalProperties: false }), { description: 'only drifted nodes; empty when everything is as applied' }),
  checked_at: Timestamp,
}, { additionalProperties: false })

/** `data._status.drift` of a drifted node, and the `drift_detected` stream event's fields. */
export const NodeDriftSchema = Type.Object({
  detected_at: Timestamp,
  fields: Type.Array(Type.String(), { description: 'the drifted paths of the node\'s objects; "(missing)" for an object deleted from the cluster' }),
}, { additionalProperties: false, description: 'present while the node is drifted (state "drifted")' })

export const DriftDetectedEvent = Type.Object({
  node_id: Type.String(),
  fields: Type.Array(Type.String(), { description: 'the node\'s drifted paths now; "(missing)" for a deleted object' }),
}, { additionalProperties: false })

export const DriftResolvedEvent = Type.Object({ node_id: Type.String() }, { additionalProperties: false })
