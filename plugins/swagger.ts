// The OpenAPI document is generated from the registered route schemas; `npm run openapi` writes it to
// openapi.yaml and a test fails when the committed file is stale. test/app/openapi-client.test.ts holds it
// to what a client generator needs: it lints clean and a typed client generated from it compiles.
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { APP_NAME, APP_VERSION, APP_DESCRIPTION } from '../src/app-info.ts'
import { CanvasNode, CanvasEdge } from '../schemas/nodes.ts'
import routeResponses from './route-responses.ts'
import { isTlsRequest } from './security.ts'

/**
 * Replies keep canvas nodes and edges as open objects at run time, so the serializer returns them byte for
 * byte (it would reorder or drop keys of a listed shape). A schema marked with this keyword is documented
 * as the shape the request side validates instead; the keyword never reaches the document.
 */
export const DOCUMENT_AS = 'x-document-as'
const DOCUMENTED_SHAPES: Record<string, object> = { CanvasNode, CanvasEdge }

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

function plain(schema: object): Json {
  return JSON.parse(JSON.stringify(schema)) as Json
}

/** Depth-first rewrite of every schema-like object in the document. */
function rewrite(node: unknown, visit: (n: Json) => Json): unknown {
  if (Array.isArray(node)) return node.map((item) => rewrite(item, visit))
  if (!isObject(node)) return node
  const replaced = visit(node)
  if (replaced !== node) return replaced
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, rewrite(v, visit)]))
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/**
 * Request validation fills in defaults (ajv `useDefaults`) before it checks `required`, so a property with a
 * default may always be left out, even where the schema lists it as required: the document says so, for
 * request schemas only (a reply always carries the property). Defaults apply along `properties` and
 * `items`, not inside anyOf/oneOf, so only those are followed.
 */
function relaxDefaulted(schema: unknown): void {
  if (!isObject(schema)) return
  const properties = schema.properties
  if (isObject(properties)) {
    if (Array.isArray(schema.required)) {
      const required = schema.required.filter((name) => !(isObject(properties[name]) && (properties[name] as Json).default !== undefined))
      if (required.length > 0) schema.required = required
      else delete schema.required
    }
    for (const property of Object.values(properties)) relaxDefaulted(property)
  }
  relaxDefaulted(schema.items)
}

/** A body whose properties are all optional may be left out (validation treats no body as `{}`). */
function optionalBody(schema: unknown, components: Record<string, unknown>): boolean {
  let s = schema
  if (isObject(s) && typeof s.$ref === 'string') s = components[s.$ref.replace('#/components/schemas/', '')]
  if (!isObject(s) || s.type !== 'object') return false
  return (!Array.isArray(s.required) || s.required.length === 0) && s.minProperties === undefined
}

function transformDocument(doc: Json): Json {
  const components = (doc.components ?? {}) as Json
  const schemas = { ...(components.schemas as Json | undefined) }
  for (const [name, shape] of Object.entries(DOCUMENTED_SHAPES)) schemas[name] = plain(shape)
  const shapes = Object.entries(DOCUMENTED_SHAPES).map(([name]) => ({ name, json: schemas[name] }))
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

  const visit = (n: Json): Json => {
    const marked = n[DOCUMENT_AS]
    if (typeof marked === 'string' && marked in DOCUMENTED_SHAPES) return ref(marked)
    // The request side inlines the same shapes: one named type serves both directions in a generated client.
    const same = shapes.find((s) => sameJson(s.json, n))
    return same ? ref(same.name) : n
  }
  const rewritten = Object.fromEntries(Object.entries(schemas).map(([name, schema]) =>
    [name, shapes.some((s) => s.name === name) ? schema : rewrite(schema, visit)]))
  const paths = rewrite(doc.paths, visit) as Record<string, Record<string, Json>>

  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      for (const parameter of (op.parameters ?? []) as Json[]) {
        if (parameter.in === 'query' && isObject(parameter.schema) && parameter.schema.default !== undefined) parameter.required = false
      }
      const body = op.requestBody as { required?: boolean; content?: Record<string, { schema?: unknown }> } | undefined
      const schema = body?.content?.['application/json']?.schema
      relaxDefaulted(schema)
      if (body && optionalBody(schema, rewritten)) body.required = false
    }
  }
  return { ...doc, paths, components: { ...components, schemas: rewritten } }
}

interface SwaggerCsp { script: string[]; style: string[] }

/** @fastify/swagger-ui's static policy (its hashes of the page's inline script and style), over plain HTTP and over TLS. */
export function docsCsp(csp: SwaggerCsp): [string, string] {
  const plain = `default-src 'self'; base-uri 'self'; font-src 'self' https: data:; frame-ancestors 'self'; img-src 'self' data: validator.swagger.io; object-src 'none'; script-src 'self' ${csp.script.join(' ')}; script-src-attr 'none'; style-src 'self' https: ${csp.style.join(' ')};`
  return [plain, `${plain} upgrade-insecure-requests;`]
}

export default fp(async (app) => {
  // Before any route: the replies implied by each route's declaration join its response schema.
  await app.register(routeResponses)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: APP_NAME, version: APP_VERSION, description: APP_DESCRIPTION, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
      servers: [{ url: '/', description: 'this server; every API path starts with /v1' }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    refResolver: {
      // Shared schemas keep their $id as their component name.
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transformObject: (doc) => ('openapiObject' in doc ? transformDocument(doc.openapiObject as Json) : doc.swaggerObject) as never,
  })
  // The docs page's CSP is @fastify/swagger-ui's `staticCSP: true` policy, with `upgrade-insecure-requests`
  // only on TLS requests (API.md §14): over plain HTTP it sent the page's scripts to an https nobody serves.
  // Set here, in a scope of its own, because the library's hook sees no request to tell the scheme by.
  await app.register(async (docs) => {
    let policies: [plain: string, tls: string] | undefined
    docs.addHook('onRequest', (request, reply, done) => {
      policies ??= docsCsp((docs as unknown as { swaggerCSP: SwaggerCsp }).swaggerCSP)
      reply.header('content-security-policy', policies[isTlsRequest(request) ? 1 : 0])
      done()
    })
    await docs.register(swaggerUi, { routePrefix: '/docs', staticCSP: false, uiConfig: { deepLinking: true } })
  })

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_req, reply) => reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })))
}, { name: 'swagger', dependencies: ['schemas'] })
