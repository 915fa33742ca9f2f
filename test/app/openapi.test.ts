import t from 'tap'
import { readFileSync } from 'node:fs'
import { validate } from '@readme/openapi-parser'
import { startTestApp } from '../helpers/app.ts'

const { app } = await startTestApp(t)
const committed = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')

t.test('the committed openapi.yaml is what the routes generate', async (t) => {
  t.equal(committed, app.swagger({ yaml: true }), 'openapi.yaml is stale: run `npm run openapi` and commit it')
})

t.test('the document is valid OpenAPI 3.1 under an independent validator', async (t) => {
  const doc = app.swagger() as { openapi: string }
  t.equal(doc.openapi, '3.1.0')
  const result = await validate(structuredClone(doc) as never)
  t.ok(result.valid, JSON.stringify((result as { errors?: unknown }).errors ?? []))
})

type Operation = { operationId?: string; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }

t.test('every API operation has an operationId, a success schema and {error} replies', async (t) => {
  const doc = app.swagger() as { paths: Record<string, Record<string, Operation>> }
  const ids = new Set<string>()
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/v1')) continue
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`
      t.ok(op.operationId, `${where} has an operationId`)
      t.notOk(ids.has(op.operationId!), `${where} operationId is unique`)
      ids.add(op.operationId!)
      const codes = Object.keys(op.responses ?? {})
      t.ok(codes.some((c) => /^2/.test(c)), `${where} documents its success reply`)
      t.ok(codes.some((c) => /^4/.test(c)), `${where} documents its error replies`)
    }
  }
})

t.test('response schemas are real: no open blobs outside the canvas documents', async (t) => {
  const doc = app.swagger() as Record<string, unknown>
  const open: string[] = []
  const walk = (node: unknown, path: string) => {
    if (!node || typeof node !== 'object') return
    const n = node as Record<string, unknown>
    if (n.additionalProperties === true && !/(^|[/_])(nodes|edges|data|metadata|labels|annotations|trigger_data)(\/|$)/.test(path)) open.push(path)
    for (const [k, v] of Object.entries(n)) walk(v, `${path}/${k}`)
  }
  walk(doc, '')
  t.same(open, [], 'no additionalProperties: true where the shape is known')
})
