// Shapes referenced by `$ref` from several route groups are registered once, at the root, so every
// encapsulated route plugin resolves them and the OpenAPI document lists each once as a component.
import fp from 'fastify-plugin'
import { ErrorResponse } from '../schemas/common.ts'
import { Workflow, WorkflowSummary, Version, VersionSummary, Run } from '../schemas/workflow.ts'
import { Cluster } from '../schemas/cluster.ts'
import { Registry } from '../schemas/registry.ts'
import { User } from '../schemas/user.ts'
import { Plugin } from '../schemas/plugin.ts'
import { TrackedResource } from '../schemas/resource.ts'
import { ImportSessionSchema } from '../schemas/import.ts'
import { Build } from '../schemas/build.ts'

export default fp(async (app) => {
  for (const schema of [ErrorResponse, User, Workflow, WorkflowSummary, Version, VersionSummary, Run, Cluster, Registry, Plugin, TrackedResource, ImportSessionSchema, Build]) app.addSchema(schema)
}, { name: 'schemas' })
