// Canvas graph → ordered, validated Kubernetes objects (renderWorkflow) and their YAML form.
export { renderWorkflow, SYSTEM_NAMESPACES, type Graph } from './render.ts'
export { oncePerRender } from './plugin-lookup.ts'
export { toYaml } from './yaml.ts'
export { WIRING_RULES, WORKLOAD_TYPES } from './wiring.ts'
export { APPLY_ORDER } from './order.ts'
export * from './metadata.ts'
export type * from './types.ts'
