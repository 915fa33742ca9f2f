// What is refused when a cluster is added: names that would make paths ambiguous (`default`, id-shaped
// ones) and OIDC issuers every connection would refuse (plain http). Nothing here connects anywhere.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app } = await startTestApp(t)
const resolved: string[] = []
const original = (app.outboundPolicy as unknown as { resolve: (host: string) => Promise<string[]> }).resolve
Object.assign(app.outboundPolicy, { resolve: async (host: string) => { resolved.push(host); return original(host) } })
const user = await registerUser(app)
const create = async (payload: object) => {
  const res = await app.inject({ method: 'POST', url: '/v1/api/clusters', headers: user.headers, payload })
  return { status: res.statusCode, body: res.json() }
}
const oidc = (issuer_url: string) => ({ issuer_url, client_id: 'kube', refresh_token: 'r' })

t.test('`default` is reserved and id-shaped names are refused: every path names one cluster', async (t) => {
  let res = await create({ name: 'default', server: 'https://10.0.0.1:6443', auth_type: 'token', token: 'x' })
  t.equal(res.status, 400)
  t.match(res.body.error, /"default" is reserved/)
  res = await create({ name: '0123456789abcdef01234567', server: 'https://10.0.0.1:6443', auth_type: 'token', token: 'x' })
  t.equal(res.status, 400)
  t.match(res.body.error, /must not look like a cluster id/)
  t.equal(await app.db.collection('clusters').countDocuments(), 0, 'nothing stored')
  res = await create({ name: 'default-eu', server: 'https://10.0.0.1:6443', auth_type: 'token', token: 'x' })
  t.equal(res.status, 201, 'names that merely contain those are fine')
  t.equal((await app.inject({ url: `/v1/api/clusters/${res.body.id}`, headers: user.headers })).json().name, 'default-eu', 'reachable by id')
})

t.test('an http OIDC issuer is refused when the cluster is added, not first when it is used', async (t) => {
  let res = await create({ name: 'oidc-http', server: 'https://10.0.0.1:6443', auth_type: 'oidc', credentials: oidc('http://issuer.example.com') })
  t.equal(res.status, 400)
  t.equal(res.body.error, 'issuer_url must use https')
  res = await create({ name: 'oidc-meta', server: 'https://10.0.0.1:6443', auth_type: 'oidc', credentials: oidc('https://169.254.169.254') })
  t.equal(res.status, 400)
  t.match(res.body.error, /issuer_url address 169\.254\.169\.254 is not allowed/)
  resolved.length = 0
  res = await create({ name: 'oidc-offline', server: 'https://10.0.0.1:6443', auth_type: 'oidc', credentials: oidc('https://issuer.invalid') })
  t.equal(res.status, 201, 'an issuer that does not resolve from here may still be saved')
  t.same(resolved, [], 'no name was resolved')
  const cluster = await app.inject({ method: 'PUT', url: '/v1/api/clusters/oidc-offline/credentials', headers: user.headers, payload: { credentials: oidc('http://issuer.example.com') } })
  t.equal(cluster.statusCode, 400, 'nor can new credentials bring one in')
  t.equal(cluster.json().error, 'issuer_url must use https')
})
