// The harness itself and the command tree's common behaviour: a live list, usage errors, the API's error.
import t from 'tap'
import { startCliWorld } from './harness.ts'

const w = await startCliWorld(t)

t.test('workflows list talks to the live service', async (t) => {
  const r = await w.cwo(['workflows', 'list', '-o', 'json'])
  t.equal(r.code, 0, r.stderr)
  t.same(JSON.parse(r.stdout).workflows, [])
})

t.test('an unknown workflow is the API\'s 404, on stderr, exit 1', async (t) => {
  const r = await w.cwo(['workflows', 'get', '0123456789abcdef01234567'])
  t.equal(r.code, 1)
  t.equal(r.stdout, '')
  t.match(r.stderr, /^cwo: 404: /)
})

t.test('a usage error exits 2', async (t) => {
  const r = await w.cwo(['workflows', 'get'])
  t.equal(r.code, 2)
  t.match(r.stderr, /missing required argument/)
})
