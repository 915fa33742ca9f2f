// The adapter's own frame (API.md §10): it is on by default under /kubeorch/v1/api, KUBEORCH_UI_COMPAT=false
// removes it, its errors carry `message` beside `error` while /v1/api keeps `{error}` alone, and the
// translation helpers turn the UI's names into this API's before validation.
import t from 'tap'
import { startTestApp } from '../../helpers/app.ts'
import { toCanonical, offsetToPage, withCamelAliases } from '../../../src/compat/kubeorch/translate.ts'

t.test('KUBEORCH_UI_COMPAT=false leaves the adapter out', async (t) => {
  const { app } = await startTestApp(t, { KUBEORCH_UI_COMPAT: false })
  t.notOk(app.routeInventory.some((r) => r.url.startsWith('/kubeorch/')), 'no adapter route is registered')
  const res = await app.inject({ method: 'POST', url: '/kubeorch/v1/api/auth/login', payload: { email: 'a@example.com', password: 'x' } })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { error: 'route POST /kubeorch/v1/api/auth/login not found' }, 'a plain 404 of this API, no adapter dialect')
})

t.test('errors on the adapter carry message; /v1/api keeps {error}', async (t) => {
  const { app } = await startTestApp(t)
  const body = { email: 'nobody@example.com', password: 'wrong password 1' }
  const canonical = await app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: body })
  t.equal(canonical.statusCode, 401)
  t.same(Object.keys(canonical.json()), ['error'])
  const adapted = await app.inject({ method: 'POST', url: '/kubeorch/v1/api/auth/login', payload: body })
  t.equal(adapted.statusCode, 401)
  t.equal(adapted.json().message, adapted.json().error, 'the login page reads message')
  t.equal(adapted.json().error, canonical.json().error, 'the same text as /v1/api')
  const anonymous = await app.inject({ url: '/kubeorch/v1/api/workflows' })
  t.equal(anonymous.statusCode, 401)
  t.same(Object.keys(anonymous.json()).sort(), ['error', 'message'])
})

t.test('toCanonical renames, snake_cases, drops and lets the canonical name win', async (t) => {
  t.same(toCanonical({ authType: 'token', displayName: 'Sim', confirmPassword: 'x', name: 'sim' }, { authType: 'auth_type' }, ['confirmPassword']),
    { auth_type: 'token', display_name: 'Sim', name: 'sim' })
  t.same(toCanonical({ auth_type: 'token', authType: 'oidc' }), { auth_type: 'token' }, 'a canonical key sent as well is not overwritten')
  t.same(toCanonical({ auth_type: 'token', authType: 'oidc' }, {}, []), { auth_type: 'token' })
  t.equal(toCanonical('text'), 'text', 'a non-object is left for the schema to refuse')
  t.same(toCanonical(['a']), ['a'])
})

t.test('offsetToPage maps limit/offset onto page/limit', async (t) => {
  t.same(offsetToPage({ limit: '25', offset: '0' }), { limit: '25', page: '1' })
  t.same(offsetToPage({ limit: '25', offset: '50' }), { limit: '25', page: '3' })
  t.same(offsetToPage({ limit: '25', offset: '30' }), { limit: '25', page: '2' }, 'an offset inside a page starts at that page')
  t.same(offsetToPage({ offset: '40' }, 20), { page: '3' }, 'the default limit when none is sent')
  t.same(offsetToPage({ limit: '25', offset: 'x' }), { limit: '25', page: 'x' }, 'left for the schema to refuse')
  t.same(offsetToPage({ limit: '25' }), { limit: '25' }, 'no offset, no page')
})

t.test('withCamelAliases adds camelCase beside snake_case', async (t) => {
  t.same(withCamelAliases({ created_at: 'x', name: 'n', cluster_id: 'c' }), { created_at: 'x', name: 'n', cluster_id: 'c', createdAt: 'x', clusterId: 'c' })
  t.same(withCamelAliases({ created_at: 'x', createdAt: 'y' }), { created_at: 'x', createdAt: 'y' }, 'an existing camel key is kept')
})
