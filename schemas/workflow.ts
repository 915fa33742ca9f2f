// Workflows, versions and runs as the API shows them (API.md §3).
import { Type } from 'typebox'
import { Timestamp, Id, StringEnum } from './common.ts'
import { FreeObject } from './json.ts'
import { CanvasNode, CanvasEdge, MAX_NODES, MAX_EDGES } from './nodes.ts'
import { PaginationQuery, PageOf } from './pagination.ts'

export const WorkflowStatus = StringEnum(['draft', 'published', 'archived'])

// Replies describe canvas documents without listing their keys: the serializer would otherwise reorder
// them, and the canvas gets back exactly what it saved. The OpenAPI document shows them as the request
// side types them (CanvasNode, CanvasEdge: see plugins/swagger.ts).
const SavedNode = Type.Object({}, { additionalProperties: true, 'x-document-as': 'CanvasNode', description: 'a canvas node as saved: id, type, position {x, y}, data, width?, height? and any other keys, unchanged' })
const SavedEdge = Type.Object({}, { additionalProperties: true, 'x-document-as': 'CanvasEdge', description: 'a canvas edge as saved: id, source, target, sourceHandle?, targetHandle? and any other keys, unchanged' })
const Metadata = FreeObject('free-form metadata of the client')

const Name = Type.String({ minLength: 1, maxLength: 200 })
const Description = Type.String({ maxLength: 5000 })
const ClusterRef = Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()], { description: 'id or name of a cluster the caller may deploy to (owned, or shared as deployer or admin); runs deploy there by default' })

export const Workflow = Type.Object({
  id: Id,
  name: Type.String(),
  description: Type.String(),
  cluster_id: Type.Union([Type.String(), Type.Null()]),
  nodes: Type.Array(SavedNode),
  edges: Type.Array(SavedEdge),
  metadata: Metadata,
  status: WorkflowStatus,
  owner_id: Type.String(),
  current_version: Type.Integer({ minimum: 0, description: 'number of the newest version (0 before any)' }),
  run_count: Type.Integer({ minimum: 0 }),
  success_count: Type.Integer({ minimum: 0 }),
  failure_count: Type.Integer({ minimum: 0 }),
  last_run_at: Type.Union([Timestamp, Type.Null()]),
  auto_sync: Type.Boolean({ description: 'when drift is detected on a cluster, re-apply what was deployed there (a run with `trigger: "auto_sync"`), at most once per DRIFT_CHECK_INTERVAL_S' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Workflow', additionalProperties: false })

export const WorkflowParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const CreateWorkflowBody = Type.Object({
  name: Name,
  description: Type.Optional(Description),
  cluster_id: Type.Optional(ClusterRef),
  metadata: Type.Optional(Metadata),
}, { additionalProperties: false })

export const UpdateWorkflowBody = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Description),
  cluster_id: Type.Optional(ClusterRef),
  metadata: Type.Optional(Metadata),
  auto_sync: Type.Optional(Type.Boolean({ description: 're-apply on drift (see Workflow.auto_sync)' })),
}, { additionalProperties: false, minProperties: 1 })

export const SaveWorkflowBody = Type.Object({
  nodes: Type.Array(CanvasNode, { maxItems: MAX_NODES }),
  edges: Type.Array(CanvasEdge, { maxItems: MAX_EDGES }),
  metadata: Type.Optional(Metadata),
}, { additionalProperties: false })

export const DeleteWorkflowQuery = Type.Object({
  delete_resources: Type.Optional(Type.Boolean({ default: false, description: 'also remove the workflow\'s objects from every cluster it was deployed to' })),
}, { additionalProperties: false })

export const CloneWorkflowBody = Type.Object({ name: Type.Optional(Name) }, { additionalProperties: false })
export const SetStatusBody = Type.Object({ status: WorkflowStatus }, { additionalProperties: false })

// Lists answer summaries: a list view never shows the canvas, and it is most of each document's size.
const IncludeGraph = Type.Optional(StringEnum(['graph'], { description: '`graph` adds `nodes` and `edges` to every item' }))
const GraphSummaryFields = {
  node_count: Type.Integer({ minimum: 0, description: 'number of nodes' }),
  edge_count: Type.Integer({ minimum: 0, description: 'number of edges' }),
  node_types: Type.Array(Type.String(), { description: 'the node types used, each once, sorted' }),
  nodes: Type.Optional(Type.Array(SavedNode, { description: 'only with include=graph' })),
  edges: Type.Optional(Type.Array(SavedEdge, { description: 'only with include=graph' })),
}

export const WorkflowSummary = Type.Object({
  ...Type.Omit(Workflow, ['nodes', 'edges']).properties,
  ...GraphSummaryFields,
}, { $id: 'WorkflowSummary', additionalProperties: false, description: 'a workflow in a list: its graph summarized, the graph itself only with include=graph' })

export const WorkflowListQuery = PaginationQuery(['created_at', 'updated_at', 'name', 'status', 'last_run_at'], {
  status: Type.Optional(WorkflowStatus),
  include: IncludeGraph,
})
export const WorkflowList = PageOf('workflows', Type.Ref('WorkflowSummary'))

// Versions

export const Version = Type.Object({
  id: Id,
  workflow_id: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  name: Type.String(),
  tag: Type.String(),
  description: Type.String(),
  nodes: Type.Array(SavedNode),
  edges: Type.Array(SavedEdge),
  metadata: Metadata,
  is_automatic: Type.Boolean({ description: 'true when a run or a restore recorded it' }),
  restored_from: Type.Union([Type.Integer(), Type.Null()]),
  run_id: Type.Union([Type.String(), Type.Null()]),
  run_status: Type.Union([Type.String(), Type.Null()]),
  created_by: Type.String(),
  created_at: Timestamp,
}, { $id: 'Version', additionalProperties: false })

export const VersionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), version: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }) })
export const VersionMetaBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  tag: Type.Optional(Type.String({ maxLength: 100 })),
  description: Type.Optional(Description),
}, { additionalProperties: false })
export const VersionSummary = Type.Object({
  ...Type.Omit(Version, ['nodes', 'edges']).properties,
  ...GraphSummaryFields,
}, { $id: 'VersionSummary', additionalProperties: false, description: 'a version in a list: its graph summarized, the graph itself only with include=graph' })
export const VersionListQuery = PaginationQuery(['created_at', 'version', 'name'], { include: IncludeGraph })
export const VersionList = PageOf('versions', Type.Ref('VersionSummary'))
export const CompareQuery = Type.Object({
  v1: Type.Integer({ minimum: 1, description: 'version to compare from' }),
  v2: Type.Integer({ minimum: 1, description: 'version to compare to' }),
}, { additionalProperties: false })

const FieldChange = Type.Object({
  path: Type.String({ description: 'JSON pointer into the node or edge' }),
  old: Type.Optional(Type.Unknown({ description: 'absent when the field was added' })),
  new: Type.Optional(Type.Unknown({ description: 'absent when the field was removed' })),
}, { additionalProperties: false })

export const VersionComparison = Type.Object({
  from_version: Type.Integer(),
  to_version: Type.Integer(),
  added_nodes: Type.Array(SavedNode),
  removed_nodes: Type.Array(SavedNode),
  modified_nodes: Type.Array(Type.Object({ node_id: Type.String(), type: Type.String(), changes: Type.Array(FieldChange) }, { additionalProperties: false })),
  added_edges: Type.Array(SavedEdge, { description: 'edges whose id is only in v2' }),
  removed_edges: Type.Array(SavedEdge, { description: 'edges whose id is only in v1' }),
  modified_edges: Type.Array(Type.Object({ edge_id: Type.String(), changes: Type.Array(FieldChange) }, { additionalProperties: false }), {
    description: 'edges in both versions (same id) whose fields differ, e.g. a new target or handle',
  }),
}, { additionalProperties: false })

export const RestoreResult = Type.Object({ version: Type.Ref('Version'), workflow: Type.Ref('Workflow') }, { additionalProperties: false })

// Runs

export const RunStatus = StringEnum(['pending', 'running', 'completed', 'failed'])
export const RunTrigger = StringEnum(['manual', 'sync', 'auto_sync', 'rollback'], {
  description: 'what started the run: POST /run (`manual`), POST /sync (`sync`), drift with auto_sync on (`auto_sync`), POST /rollback (`rollback`)',
})

const ObjectFieldChange = Type.Object({
  path: Type.String({ description: 'dotted path into the object, list items by key, e.g. spec.template.spec.containers[name=web].image' }),
  old: Type.Optional(Type.Unknown({ description: 'the live value; absent when the field would be added' })),
  new: Type.Optional(Type.Unknown({ description: 'the value the run would apply; absent when the field would be removed' })),
}, { additionalProperties: false })
export const ObjectDiff = Type.Object({
  changed: Type.Array(ObjectFieldChange), added: Type.Array(ObjectFieldChange), removed: Type.Array(ObjectFieldChange),
}, { additionalProperties: false, description: 'dry runs only: how the object would differ from the live one (secret values masked)' })

export const RunNodeResult = Type.Object({
  node_id: Type.String(), kind: Type.String(), name: Type.String(), namespace: Type.Union([Type.String(), Type.Null()]),
  action: StringEnum(['created', 'configured', 'unchanged', 'failed', 'skipped'], { description: 'on a dry run, the action the run would take' }),
  message: Type.String({ description: 'what happened, or what to do about a failure' }),
  diff: Type.Optional(ObjectDiff),
}, { additionalProperties: false })

export const Run = Type.Object({
  id: Id,
  workflow_id: Type.String(),
  version: Type.Integer({ description: 'the version the run deployed: the one it recorded (run), the one restored (rollback), the one last deployed there (sync, which records none); a dry run records none and names the workflow\'s current version (of a rollback or sync: the version it would deploy)' }),
  cluster: Type.String({ description: 'the cluster\'s name when the run started' }),
  cluster_id: Type.String({ description: 'the cluster\'s id' }),
  namespace: Type.Union([Type.String(), Type.Null()], { description: 'the namespace override, if the run had one' }),
  status: RunStatus,
  dry_run: Type.Boolean(),
  started_at: Timestamp,
  finished_at: Type.Union([Timestamp, Type.Null()]),
  duration_ms: Type.Union([Type.Integer(), Type.Null()]),
  triggered_by: Type.String(),
  nodes: Type.Array(RunNodeResult, { description: 'one entry per object, in apply order' }),
  logs: Type.Array(Type.String()),
  error: Type.Union([Type.String(), Type.Null()]),
  trigger: RunTrigger,
  rollback_of: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'a rollback: the version it rolled back to (its graph restored as `version`)' }),
}, { $id: 'Run', additionalProperties: false })

export const RunParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), runId: Type.String({ minLength: 1, maxLength: 64 }) })

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
/** Run-time values per node id; bounded so a request cannot carry an unbounded payload to the cluster. */
const PerNodeValues = (what: string) => Type.Record(
  Type.String({ minLength: 1, maxLength: 128 }),
  Type.Record(Type.String({ minLength: 1, maxLength: 253 }), Type.String({ maxLength: 65_536 }), { maxProperties: 100 }),
  { maxProperties: 200, description: `${what} per node id: {<nodeId>: {<key>: <value>}}; sent to the cluster, never stored, logged or answered` },
)
export const RunRequest = Type.Object({
  cluster: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'id or name of a cluster you may deploy to; defaults to the workflow\'s cluster_id' })),
  namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 63, pattern: DNS_LABEL, description: 'puts every namespaced object in this namespace (created if missing)' })),
  dry_run: Type.Optional(Type.Boolean({ default: false, description: 'send every write with dryRun=All: nothing changes; each node says what would happen and the diff' })),
  force: Type.Optional(Type.Boolean({ default: false, description: 'take over fields another field manager owns instead of failing the node' })),
  prune: Type.Optional(Type.Boolean({ default: true, description: 'after a fully successful run, delete objects of earlier runs that left the graph (ApplySet)' })),
  adopt: Type.Optional(Type.Boolean({ default: false, description: 'take over existing objects that belong to another workflow or were not made by this service; allowed for objects of your own workflows, and for any object when you own the cluster. Without it such a node fails (409-style message naming the other workflow)' })),
  trigger_data: Type.Optional(Type.Object({
    secrets: Type.Optional(PerNodeValues('secret values')),
    envVars: Type.Optional(PerNodeValues('environment variables')),
  }, { additionalProperties: false })),
}, { additionalProperties: false })
// A run is recorded the moment it starts, so its creation time is its `started_at`: `created_at` (the list
// convention's default sort) sorts by it.
export const RunListQuery = PaginationQuery(['created_at', 'started_at', 'finished_at', 'status', 'duration_ms'], { status: Type.Optional(RunStatus) })
export const RunList = PageOf('runs', Type.Ref('Run'))

// Rollback and sync (API.md §12)

const RunTarget = Type.Pick(RunRequest, ['cluster', 'namespace', 'dry_run', 'trigger_data'])
export const SyncRequest = Type.Object({
  ...RunTarget.properties,
  namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 63, pattern: DNS_LABEL, description: 'puts every namespaced object in this namespace; default: the namespace the last deployment on that cluster used' })),
}, { additionalProperties: false })
export const RollbackRequest = Type.Object({
  version: Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'the version to roll back to' }),
  ...RunTarget.properties,
  dry_run: Type.Optional(Type.Boolean({ default: false, description: 'restore nothing, record no version, apply nothing: answer the dry run of that version (each node\'s action and diff against the live object) and the graph changes' })),
}, { additionalProperties: false })
export const RollbackResult = Type.Object({
  run: Type.Ref('Run', { description: 'the run of the version (trigger `rollback`, `rollback_of` the version asked for); a dry run when `dry_run` was asked' }),
  changes: Type.Object({
    to_version: Type.Integer({ description: 'the version rolled back to' }),
    ...Type.Omit(VersionComparison, ['from_version', 'to_version']).properties,
  }, { additionalProperties: false, description: 'from the workflow\'s graph before the rollback to the version\'s (as versions/compare answers)' }),
}, { additionalProperties: false })
