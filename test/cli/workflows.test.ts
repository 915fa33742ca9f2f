// cwo workflows against the live service: list/get/create, apply -f (created, configured, unchanged, a bad
// file refused naming its field with nothing written), export → apply → export byte for byte (live status
// left out, kept in the service), delete, and WORKFLOW names (missing, ambiguous).
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import YAML from 'yaml'
import { parseWorkflowFile, stringifyWorkflowFile, toWorkflowFile } from '../../src/cli/workflow-file.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { startCliWorld } from './harness.ts'

const w = await startCliWorld(t)
type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const api = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object): Promise<Json> => {
  const res = await w.app.app.inject({ method, url, headers: w.user.headers, ...(payload && { payload }) })
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.statusCode === 204 ? {} : res.json()
}
const byName = async (name: string): Promise<Json[]> =>
  (await api('GET', `/v1/api/workflows?search=${encodeURIComponent(name)}&limit=100`)).workflows.filter((x: Json) => x.name === name)

const fileText = (name: string, extra = '') => `apiVersion: cwo/v1
kind: Workflow
name: ${name}
description: the web tier
cluster: sim
nodes:
  - id: cm
    type: configmap
    position: { x: 0, y: 0 }
    data: { name: ${name}-config, namespace: cli-wf, data: { MODE: live } }
  - id: web
    type: deployment
    position: { x: 200, y: 10.5 }
    data: { name: ${name}-web, namespace: cli-wf, image: "nginx:1.27", replicas: 1 }
edges:
  - { id: e1, source: cm, target: web }
${extra}`

t.test('any graph the API can answer is written and read back the same, byte for byte (fixed seed)', async (t) => {
  // What the API answers is JSON: values as JSON gives them back (no -0, no undefined).
  const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown)
  const text = fc.string({ unit: 'grapheme', maxLength: 12 })
  const graph = fc.uniqueArray(fc.record({
    id: text.filter((s) => s.length > 0), type: fc.constantFrom('deployment', 'service', 'configmap'),
    position: fc.record({ x: fc.integer(), y: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? 0 : d)) }),
    data: fc.dictionary(text, json, { maxKeys: 4 }),
  }), { selector: (n) => n.id, maxLength: 5 }).map((nodes) => JSON.parse(JSON.stringify(nodes)) as typeof nodes)
  fc.assert(fc.property(graph, text, fc.option(text.filter((s) => s.length > 0)), (nodes, description, cluster) => {
    const edges = nodes.slice(1).map((n, i) => ({ id: `e${i}`, source: nodes[0].id, target: n.id }))
    const live = nodes.map((n) => ({ ...n, data: { ...n.data, _status: { state: 'running' } } }))
    const file = toWorkflowFile({ name: 'w', description, nodes: live, edges }, cluster)
    const written = stringifyWorkflowFile(file)
    const read = parseWorkflowFile(written, 'f')
    assert.deepStrictEqual(read, { ...file, nodes }, 'read back as written, without the live status')
    assert.equal(stringifyWorkflowFile(read), written, 'and written again the same bytes')
  }), { seed: 27, numRuns: 100 })
  t.pass('100 graphs')
})

t.test('apply -f creates, then unchanged (nothing written), then configured; it records no version (runs do)', async (t) => {
  const path = join(w.dir, 'web.yaml')
  await writeFile(path, fileText('web'))
  const first = await w.cwo(['workflows', 'apply', '-f', path])
  t.equal(first.code, 0, first.stderr)
  t.equal(first.stdout, 'workflow/web created\n')
  const [created] = await byName('web')
  const wf = await api('GET', `/v1/api/workflows/${created.id}`)
  t.equal(wf.current_version, 0, 'no version: the first run records one')
  t.equal(wf.description, 'the web tier')
  t.equal(wf.cluster_id, 'sim')
  t.same(wf.nodes.map((n: Json) => n.id), ['cm', 'web'])
  t.same(wf.nodes[1].position, { x: 200, y: 10.5 })
  t.same(wf.edges, [{ id: 'e1', source: 'cm', target: 'web' }])

  const again = await w.cwo(['workflows', 'apply', '-f', path])
  t.equal(again.code, 0, again.stderr)
  t.equal(again.stdout, 'workflow/web unchanged\n')
  const after = await api('GET', `/v1/api/workflows/${created.id}`)
  t.equal(after.current_version, 0, 'no version')
  t.equal(after.updated_at, wf.updated_at, 'nothing written')

  await writeFile(path, fileText('web').replace('replicas: 1', 'replicas: 3'))
  const changed = await w.cwo(['workflows', 'apply', '-f', path, '-o', 'json'])
  t.equal(changed.code, 0, changed.stderr)
  t.match(changed.stderr, 'workflow/web configured')
  const answered = JSON.parse(changed.stdout)
  t.equal(answered.current_version, 0, 'answered whole with -o json, still no version')
  t.equal(answered.nodes[1].data.replicas, 3)

  const desc = await w.cwo(['workflows', 'apply', '-f', '-'], { stdin: fileText('web').replace('replicas: 1', 'replicas: 3').replace('the web tier', 'the front') })
  t.equal(desc.stdout, 'workflow/web configured\n', desc.stderr)
  const last = await api('GET', `/v1/api/workflows/${created.id}`)
  t.equal(last.description, 'the front')
  t.equal(last.current_version, 0)
  t.equal((await byName('web')).length, 1, 'one workflow of that name throughout')

  // A graph the API refuses, with a new description: neither is applied.
  const refused = await w.cwo(['workflows', 'apply', '-f', '-'], { stdin: fileText('web').replace('type: deployment', 'type: no-such-type').replace('the web tier', 'other') })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /^cwo: 400: /)
  const kept = await api('GET', `/v1/api/workflows/${created.id}`)
  t.equal(kept.description, 'the front', 'the description put back')
  t.same(kept.nodes, last.nodes, 'the graph as it was')
  t.equal(kept.current_version, 0)
})

t.test('a malformed file is refused naming the field, and nothing is created', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['edge to nowhere', fileText('bad1').replace('target: web', 'target: nope'), /edges\[0\]\.target: no node has the id "nope"/],
    ['node without type', fileText('bad2').replace('type: deployment', 'kind2: deployment'), /nodes\[1\]\.type: required/],
    ['repeated id', fileText('bad3').replace('id: web', 'id: cm'), /nodes\[1\]\.id: "cm" is also the id of nodes\[0\]/],
    ['wrong apiVersion', fileText('bad4').replace('cwo/v1', 'v2'), /apiVersion: must be cwo\/v1/],
    ['unknown top field', fileText('bad5', 'replicas: 3\n'), /replicas: unknown field/],
    ['nodes not a list', 'apiVersion: cwo/v1\nkind: Workflow\nname: bad6\nnodes: {a: 1}\n', /nodes: must be a list/],
    ['not YAML', 'apiVersion: cwo/v1\nname: [unclosed\n', /not valid YAML/],
  ]
  for (const [what, text, message] of cases) {
    const r = await w.cwo(['workflows', 'apply', '-f', '-'], { stdin: text })
    t.equal(r.code, 2, `${what}: usage exit`)
    t.match(r.stderr, message, what)
    t.match(r.stderr, /^cwo: stdin: /, `${what}: names the source`)
    t.equal(r.stdout, '')
  }
  // A graph only the API can judge (an unknown node type): refused by the save; the created workflow is removed.
  const r = await w.cwo(['workflows', 'apply', '-f', '-'], { stdin: fileText('bad7').replace('type: deployment', 'type: no-such-type') })
  t.equal(r.code, 1)
  t.match(r.stderr, /^cwo: 400: .*no-such-type/)
  const page = await api('GET', '/v1/api/workflows?search=bad&limit=100')
  t.same(page.workflows, [], 'no workflow was left behind')
})

t.test('export → delete → apply → export is byte for byte; live status is neither exported nor erased', async (t) => {
  const name = 'roundtrip'
  t.equal((await w.cwo(['workflows', 'apply', '-f', '-'], { stdin: fileText(name) })).code, 0)
  const [{ id }] = await byName(name)
  // Deploy it, so the watchers write the nodes' live status (data._status) into the workflow.
  const ran = await api('POST', `/v1/api/workflows/${id}/run`, {})
  t.equal(ran.status, 'completed')
  await waitFor('the ConfigMap node\'s live status', async () => {
    await w.app.app.services.resourceWatch.idle()
    return (await api('GET', `/v1/api/workflows/${id}`)).nodes[0].data._status
  }, 5000)

  const out = join(w.dir, 'exported.yaml')
  const exported = await w.cwo(['workflows', 'export', name, '-f', out])
  t.equal(exported.code, 0, exported.stderr)
  const first = await readFile(out, 'utf8')
  t.notMatch(first, '_status', 'no live status in the file')
  t.same(YAML.parse(first), YAML.parse(fileText(name)), 'the file says what was applied')
  const stdout = await w.cwo(['workflows', 'export', id])
  t.equal(stdout.stdout, first, 'to stdout the same, by id')

  // Applying the export onto the deployed workflow changes nothing and keeps its live status.
  const same = await w.cwo(['workflows', 'apply', '-f', out])
  t.equal(same.stdout, `workflow/${name} unchanged\n`, same.stderr)
  await writeFile(out, first.replace('replicas: 1', 'replicas: 2'))
  t.equal((await w.cwo(['workflows', 'apply', '-f', out])).stdout, `workflow/${name} configured\n`)
  const kept = await api('GET', `/v1/api/workflows/${id}`)
  t.ok(kept.nodes[0].data._status, 'a graph change keeps the live status the watchers wrote')
  t.equal(kept.nodes[1].data.replicas, 2)
  await writeFile(out, first)
  t.equal((await w.cwo(['workflows', 'apply', '-f', out])).code, 0)

  const refused = await w.cwo(['workflows', 'delete', name])
  t.equal(refused.code, 2)
  t.match(refused.stderr, /--yes/)
  t.equal((await byName(name)).length, 1, 'not deleted without --yes')
  const deleted = await w.cwo(['workflows', 'delete', name, '--yes'])
  t.equal(deleted.code, 0, deleted.stderr)
  t.same(await byName(name), [])

  t.equal((await w.cwo(['workflows', 'apply', '-f', out])).stdout, `workflow/${name} created\n`)
  const second = await w.cwo(['workflows', 'export', name])
  t.equal(second.stdout, first, 'byte-identical after the round trip')
})

t.test('create, get (table, yaml, json), and list in every format', async (t) => {
  const created = await w.cwo(['workflows', 'create', '--name', 'made', '--description', 'by hand', '--cluster', 'sim'])
  t.equal(created.code, 0, created.stderr)
  const id = created.stdout.trim()
  t.match(id, /^[0-9a-f]{24}$/, 'table form: the new id alone')
  t.match(created.stderr, 'workflow/made created')

  const table = await w.cwo(['workflows', 'get', 'made'])
  t.equal(table.code, 0, table.stderr)
  t.match(table.stdout, new RegExp(`^id: +${id}$`, 'm'))
  t.match(table.stdout, /^cluster: +sim$/m)
  t.match(table.stdout, /no nodes/)
  const yaml = YAML.parse((await w.cwo(['workflows', 'get', id, '-o', 'yaml'])).stdout)
  const json = JSON.parse((await w.cwo(['workflows', 'get', 'made', '-o', 'json'])).stdout)
  t.same(yaml, json, 'yaml and json are the same answer')
  t.same(json, await api('GET', `/v1/api/workflows/${id}`), 'the API\'s answer whole')

  const list = JSON.parse((await w.cwo(['workflows', 'list', '-o', 'json', '--limit', '2'])).stdout)
  t.same(Object.keys(list).sort(), ['limit', 'page', 'total', 'workflows'], 'the whole page')
  t.equal(list.workflows.length, 2)
  t.equal(list.total, 3)
  t.same(YAML.parse((await w.cwo(['workflows', 'list', '-o', 'yaml', '--limit', '2'])).stdout), list)
  const rows = await w.cwo(['workflows', 'list', '--limit', '2'])
  const lines = rows.stdout.trimEnd().split('\n')
  t.match(lines[0], /^ID +NAME +STATUS +VERSION +NODES +LAST RUN$/)
  t.equal(lines.length, 3, 'header and two rows')
  t.match(rows.stderr, '2 of 3 shown: --page 2 for more')
  const page2 = await w.cwo(['workflows', 'list', '--limit', '2', '--page', '2'])
  t.equal(page2.stdout.trimEnd().split('\n').length, 2)
  const searched = await w.cwo(['workflows', 'list', '--search', 'roundtrip'])
  t.match(searched.stdout, /roundtrip +draft +\d+ +2 +\S/)
  t.equal((await w.cwo(['workflows', 'list', '--limit', 'x'])).code, 2, 'a bad --limit is a usage error')
})

t.test('WORKFLOW by name: missing is a 404, ambiguous lists the ids, apply refuses an ambiguous name', async (t) => {
  const missing = await w.cwo(['workflows', 'get', 'nobody'])
  t.equal(missing.code, 1)
  t.equal(missing.stderr, 'cwo: 404: no workflow named "nobody"\n')
  const a = await api('POST', '/v1/api/workflows', { name: 'twin' })
  const b = await api('POST', '/v1/api/workflows', { name: 'twin' })
  await api('POST', '/v1/api/workflows', { name: 'twin-not' })
  const ambiguous = await w.cwo(['workflows', 'get', 'twin'])
  t.equal(ambiguous.code, 1)
  t.match(ambiguous.stderr, '2 workflows are named "twin": use the id')
  t.match(ambiguous.stderr, a.id)
  t.match(ambiguous.stderr, b.id)
  const applied = await w.cwo(['workflows', 'apply', '-f', '-'], { stdin: fileText('twin') })
  t.equal(applied.code, 1)
  t.match(applied.stderr, '2 workflows are named "twin"')
  t.equal((await api('GET', `/v1/api/workflows/${a.id}`)).nodes.length, 0, 'neither was changed')
  const one = await w.cwo(['workflows', 'get', 'twin-not', '-o', 'json'])
  t.equal(JSON.parse(one.stdout).name, 'twin-not', 'an exact name among names containing it')
})
