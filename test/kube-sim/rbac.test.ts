// RBAC objects and PodDisruptionBudget validation, as `kubectl apply --dry-run=server` of the deployment
// manifests needs them (deploy/kubernetes): the kinds are discoverable, stored, validated like a real
// apiserver validates the common mistakes, and a dry run stores nothing. Authorization is not enforced.
import t from 'tap'
import { startKubeSim } from './index.ts'
import { raw } from './test-helpers.ts'

const sim = await startKubeSim()
t.teardown(() => sim.close())
const RBAC = '/apis/rbac.authorization.k8s.io/v1'
// The server's answer only when it is not the expected success (keeps passing output short).
const why = (r: { status: number; text: string }, what: string) => r.status < 300 ? what : `${what}: ${r.text}`

const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] }
const binding = (roleName: string, kind = 'Role') => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'reader' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName },
  subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }],
})

t.test('the four RBAC kinds are discovered with their scope', async (t) => {
  const doc = (await raw(sim, 'GET', RBAC)).json
  const scope = Object.fromEntries(doc.resources.filter((r: { name: string }) => !r.name.includes('/')).map((r: { kind: string; namespaced: boolean }) => [r.kind, r.namespaced]))
  t.same(scope, { Role: true, RoleBinding: true, ClusterRole: false, ClusterRoleBinding: false })
})

t.test('a dry-run create is validated and stores nothing; a real one is stored', async (t) => {
  const dry = await raw(sim, 'POST', `${RBAC}/namespaces/default/roles?dryRun=All`, { body: role })
  t.equal(dry.status, 201, why(dry, 'the dry run is accepted'))
  t.equal((await raw(sim, 'GET', `${RBAC}/namespaces/default/roles/reader`)).status, 404, 'nothing stored by the dry run')
  const created = await raw(sim, 'POST', `${RBAC}/namespaces/default/roles`, { body: role })
  t.equal(created.status, 201, why(created, 'created'))
  t.same((await raw(sim, 'GET', `${RBAC}/namespaces/default/roles/reader`)).json.rules, role.rules)
})

t.test('a binding needs a roleRef, of a kind it may bind, and never changes it', async (t) => {
  const noRef = await raw(sim, 'POST', `${RBAC}/namespaces/default/rolebindings?dryRun=All`, { body: { ...binding('reader'), roleRef: undefined } })
  t.equal(noRef.status, 422)
  t.match(noRef.json, { reason: 'Invalid', details: { causes: [{ field: 'roleRef', reason: 'FieldValueRequired' }] } })
  const clusterToRole = await raw(sim, 'POST', `${RBAC}/clusterrolebindings?dryRun=All`, { body: { ...binding('reader'), kind: 'ClusterRoleBinding' } })
  t.equal(clusterToRole.status, 422, 'a ClusterRoleBinding may only bind a ClusterRole')
  t.match(clusterToRole.json.details.causes, [{ field: 'roleRef.kind' }])
  const okCluster = await raw(sim, 'POST', `${RBAC}/clusterrolebindings?dryRun=All`, { body: { ...binding('view', 'ClusterRole'), kind: 'ClusterRoleBinding' } })
  t.equal(okCluster.status, 201, why(okCluster, 'a ClusterRoleBinding of a ClusterRole is accepted'))

  t.equal((await raw(sim, 'POST', `${RBAC}/namespaces/default/rolebindings`, { body: binding('reader') })).status, 201)
  const changed = await raw(sim, 'PATCH', `${RBAC}/namespaces/default/rolebindings/reader`, { body: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' } }, contentType: 'application/merge-patch+json' })
  t.equal(changed.status, 422)
  t.match(changed.json.details.causes, [{ field: 'roleRef', message: /cannot change roleRef/ }])
  const subjects = await raw(sim, 'PATCH', `${RBAC}/namespaces/default/rolebindings/reader`, { body: { subjects: [{ kind: 'ServiceAccount', name: 'other', namespace: 'default' }] }, contentType: 'application/merge-patch+json' })
  t.equal(subjects.status, 200, 'the subjects may change')
})

t.test('a PodDisruptionBudget sets minAvailable or maxUnavailable, not both', async (t) => {
  const pdb = (spec: object) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'api' }, spec: { selector: { matchLabels: { app: 'api' } }, ...spec } })
  const both = await raw(sim, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets?dryRun=All', { body: pdb({ minAvailable: 1, maxUnavailable: 1 }) })
  t.equal(both.status, 422)
  t.match(both.json.details.causes, [{ message: /cannot be both set/ }])
  for (const spec of [{ minAvailable: 1 }, { maxUnavailable: '50%' }]) {
    const one = await raw(sim, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets?dryRun=All', { body: pdb(spec) })
    t.equal(one.status, 201, why(one, JSON.stringify(spec)))
  }
})
