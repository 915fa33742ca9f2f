// The harness itself and the command tree's common behaviour: a live list, usage errors, the API's error.
import t from 'tap'
import { freePort } from '../helpers/ports.ts'
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

t.test('a server that is not there: one line naming it, exit 1; a bad token: the API\'s 401 with what to do', async (t) => {
  const nobody = `http://127.0.0.1:${await freePort()}`
  const gone = await w.cwo(['workflows', 'list'], { env: { CWO_SERVER: nobody } })
  t.equal(gone.code, 1)
  t.equal(gone.stderr, `cwo: cannot reach ${nobody}: connection refused\n`)
  const bad = await w.cwo(['whoami'], { env: { CWO_TOKEN: 'not-a-token' } })
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^cwo: 401: .*\(log in again: cwo login\)\n$/)
  t.notMatch(bad.stderr, 'not-a-token', 'the token is not repeated')
})

t.test('no token anywhere: refused before any request, saying how to log in', async (t) => {
  const r = await w.cwo(['workflows', 'list'], { env: { CWO_TOKEN: undefined } })
  t.equal(r.code, 1)
  t.equal(r.stderr, `cwo: not logged in to ${w.server}: run cwo login --server ${w.server} (or set CWO_TOKEN)\n`)
})

t.test('--help lists the command groups', async (t) => {
  const r = await w.cwo(['--help'])
  t.equal(r.code, 0)
  for (const group of ['login', 'logout', 'context', 'whoami', 'workflows']) t.match(r.stdout, new RegExp(`^  ${group}\\b`, 'm'), group)
  const wf = await w.cwo(['workflows', '--help'])
  for (const sub of ['list', 'get', 'create', 'apply', 'export', 'delete']) t.match(wf.stdout, new RegExp(`^  ${sub}\\b`, 'm'), sub)
})
