// Same input → byte-identical analysis (nodes, edges, layout), whatever order the YAML lists services in;
// the layout flows one way and never overlaps; interpolation obeys the specification for any value.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { runs } from '../../helpers/seed.ts'
import { parseDocument } from 'yaml'
import { analyzeCompose, layoutGraph, type Analysis } from '../../../src/services/import/index.ts'
import { NODE_HEIGHT, NODE_WIDTH } from '../../../src/services/import/layout.ts'
import { interpolate } from '../../../src/services/import/interpolate.ts'

const dir = join(import.meta.dirname, '..', 'fixtures')
const read = (name: string) => readFileSync(join(dir, name), 'utf8')
const env = { DB_PASSWORD: 'p', DB_ROOT_PASSWORD: 'r' }

function reordered(content: string): string {
  const doc = parseDocument(content)
  const services = doc.get('services') as { items: unknown[] }
  services.items.reverse()
  return doc.toString()
}

function checkLayout(t: Test, a: Analysis): void {
  const pos = new Map(a.nodes.map((n) => [n.id, n.position]))
  for (const e of a.edges) t.ok(pos.get(e.source)!.x < pos.get(e.target)!.x, `${e.id} flows left to right`)
  const boxes = a.nodes.map((n) => n.position)
  let overlaps = 0
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    if (Math.abs(boxes[i].x - boxes[j].x) < NODE_WIDTH && Math.abs(boxes[i].y - boxes[j].y) < NODE_HEIGHT) overlaps++
  }
  t.equal(overlaps, 0, 'no two nodes overlap')
}

for (const fixture of ['wordpress.yaml', 'profiles.yaml', 'healthchecks.yaml', 'secrets-configs.yaml', 'bind-mounts.yaml']) {
  t.test(`${fixture}: deterministic and laid out`, async (t) => {
    const first = analyzeCompose(read(fixture), { env, profiles: ['debug'], ingress: true })
    const second = analyzeCompose(read(fixture), { env, profiles: ['debug'], ingress: true })
    t.same(second, first)
    t.equal(JSON.stringify(second), JSON.stringify(first), 'byte-identical')
    const shuffled = analyzeCompose(reordered(read(fixture)), { env, profiles: ['debug'], ingress: true })
    t.equal(JSON.stringify(shuffled), JSON.stringify(first), 'services listed in another order → the same analysis')
    checkLayout(t, first)
  })
}

t.test('layoutGraph: origin offsets, unknown edge ends ignored, deterministic', async (t) => {
  const nodes = [{ id: 'a' }, { id: 'b' }, { id: 'c' }]
  const edges = [{ source: 'a', target: 'b' }, { source: 'a', target: 'c' }, { source: 'old', target: 'a' }]
  const p = layoutGraph(nodes, edges)
  t.same(layoutGraph(nodes, edges), p)
  const q = layoutGraph(nodes, edges, { origin: { x: 1000, y: 50 } })
  for (const id of ['a', 'b', 'c']) t.same(q[id], { x: p[id].x + 1000, y: p[id].y + 50 })
  t.ok(p.a.x < p.b.x && p.a.x < p.c.x)
})

// A reference model of the specification's operators, checked against the parser for generated values.
t.test('interpolation matches the specification for any set/unset/empty variable', async (t) => {
  const value = fc.oneof(fc.constant(undefined), fc.constant(''), fc.stringMatching(/^[a-z0-9 ]{1,8}$/))
  fc.assert(fc.property(value, fc.stringMatching(/^[a-z0-9]{0,6}$/), fc.constantFrom(':-', '-', ':+', '+'), (v, operand, op) => {
    const lookup = (n: string) => (n === 'V' ? v : undefined)
    const got = interpolate(`<\${V${op}${operand}}>`, lookup, 'p').value
    const set = v !== undefined
    const nonEmpty = set && v !== ''
    const expected = op === ':-' ? (nonEmpty ? v : operand) : op === '-' ? (set ? v : operand) : op === ':+' ? (nonEmpty ? operand : '') : (set ? operand : '')
    return got === `<${expected}>`
  }), { numRuns: runs(500) })
  fc.assert(fc.property(fc.stringMatching(/^[a-zA-Z0-9 _.$/:{}-]{0,30}$/), (s) => interpolate(s.replace(/\$/g, '$$$$'), () => undefined, 'p').value === s), { numRuns: runs(300) })
  t.pass('properties hold')
})
