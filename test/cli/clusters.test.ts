// cwo clusters against the live service and the simulator: list, add from a kubeconfig file or stdin, test,
// remove, and the refusals (no file, a name taken, an exec plugin in the kubeconfig, no --yes).
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import YAML from 'yaml'
import { startCliWorld } from './harness.ts'

const w = await startCliWorld(t)
const kubeconfig = join(w.dir, 'sim.kubeconfig')
await writeFile(kubeconfig, w.sim.kubeconfigYaml())

t.test('list shows the simulator as the default; add registers a second from a kubeconfig file, test reaches it', async (t) => {
  const before = await w.cwo(['clusters', 'list'])
  t.equal(before.code, 0, before.stderr)
  t.match(before.stdout, /^NAME\s+STATUS\s+SERVER\s+AUTH\s+ACCESS\s+VERSION\n/)
  t.match(before.stdout, /\nsim \(default\)\s/)

  const added = await w.cwo(['clusters', 'add', 'lab', '--kubeconfig', 'sim.kubeconfig', '--description', 'the simulator again'])
  t.equal(added.code, 0, added.stderr)
  t.equal(added.stderr, 'cluster/lab added\n', 'not the default: sim was first')
  t.equal(added.stdout, '')

  const listed = JSON.parse((await w.cwo(['clusters', 'list', '-o', 'json'])).stdout)
  const lab = listed.clusters.find((c: { name: string }) => c.name === 'lab')
  t.match(lab, { auth_type: 'kubeconfig', is_default: false, description: 'the simulator again', access: 'owner' })
  const secrets = Object.values(YAML.parse(w.sim.kubeconfigYaml()).users[0].user as Record<string, unknown>).filter((v): v is string => typeof v === 'string' && v.length > 8)
  t.ok(secrets.length > 0, 'the kubeconfig has credentials')
  t.same(secrets.filter((v) => JSON.stringify(listed).includes(v)), [], 'none of them in the answer')

  const tested = await w.cwo(['clusters', 'test', 'lab'])
  t.equal(tested.code, 0, tested.stderr)
  t.match(tested.stdout, /^lab: healthy, Kubernetes v\S+, \d+ nodes\n$/)
  t.match(JSON.parse((await w.cwo(['clusters', 'test', 'lab', '-o', 'json'])).stdout), { status: 'healthy' })
})

t.test('add reads the kubeconfig from stdin, and --default makes it the default', async (t) => {
  const r = await w.cwo(['clusters', 'add', 'piped', '--kubeconfig', '-', '--default', '-o', 'json'], { stdin: w.sim.kubeconfigYaml() })
  t.equal(r.code, 0, r.stderr)
  t.match(JSON.parse(r.stdout), { name: 'piped', is_default: true })
  t.equal(r.stderr, 'cluster/piped added (your default)\n')
  t.equal((await w.cwo(['clusters', 'remove', 'piped', '--yes'])).code, 0)
})

t.test('refusals: no file, an empty one, a name taken, an exec plugin, remove without --yes, an unknown cluster', async (t) => {
  const missing = await w.cwo(['clusters', 'add', 'x', '--kubeconfig', 'nope.yaml'])
  t.equal(missing.code, 2)
  t.equal(missing.stderr, 'cwo: cannot read nope.yaml: ENOENT\n')
  await writeFile(join(w.dir, 'empty.yaml'), '\n')
  t.equal((await w.cwo(['clusters', 'add', 'x', '--kubeconfig', 'empty.yaml'])).stderr, 'cwo: empty.yaml is empty\n')
  const noFlag = await w.cwo(['clusters', 'add', 'x'])
  t.equal(noFlag.code, 2)
  t.match(noFlag.stderr, /--kubeconfig <file>' not specified/)

  const taken = await w.cwo(['clusters', 'add', 'sim', '--kubeconfig', 'sim.kubeconfig'])
  t.equal(taken.code, 1)
  t.match(taken.stderr, /^cwo: 409: /)

  const doc = YAML.parse(w.sim.kubeconfigYaml())
  doc.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/steal' } }
  const exec = YAML.stringify(doc)
  const refused = await w.cwo(['clusters', 'add', 'evil', '--kubeconfig', '-'], { stdin: exec })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /^cwo: 400: .*exec/)
  t.notOk(JSON.parse((await w.cwo(['clusters', 'list', '-o', 'json'])).stdout).clusters.some((c: { name: string }) => c.name === 'evil'), 'nothing registered')

  const noYes = await w.cwo(['clusters', 'remove', 'lab'])
  t.equal(noYes.code, 2)
  t.equal(noYes.stderr, 'cwo: removing cluster lab needs --yes\n')
  t.equal((await w.cwo(['clusters', 'test', 'nowhere'])).code, 1)
  t.match((await w.cwo(['clusters', 'test', 'nowhere'])).stderr, /^cwo: 404: /)
})

t.test('remove --yes removes it', async (t) => {
  const r = await w.cwo(['clusters', 'remove', 'lab', '--yes'])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stderr, 'cluster/lab removed\n')
  t.notOk(JSON.parse((await w.cwo(['clusters', 'list', '-o', 'json'])).stdout).clusters.some((c: { name: string }) => c.name === 'lab'))
})
