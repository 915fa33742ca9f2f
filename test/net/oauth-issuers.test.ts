// OAUTH_PROVIDERS issuers (and GitHub base/api URLs) are held to what the outbound policy never allows:
// unspecified (0.0.0.0, ::), link-local and cloud metadata addresses, in any spelling, are refused at
// start-up; at discovery the issuer's resolved address and the endpoints its document names are checked.
import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { parseProviders } from '../../src/services/auth-config.ts'
import { discover } from '../../src/services/oauth-providers.ts'
import { loadConfig } from '../../src/config.ts'

const oidc = (issuer: string) => JSON.stringify([{ name: 'corp', type: 'oidc', client_id: 'c', client_secret: 's', issuer }])

t.test('start-up refuses issuers at unspecified, link-local or metadata addresses, in any spelling', async (t) => {
  for (const issuer of ['https://0.0.0.0', 'https://0', 'https://0.0.0.0:8443/realms/x', 'https://[::]', 'https://[::ffff:0.0.0.0]', 'https://169.254.169.254',
    'https://2852039166', 'https://0xa9fea9fe', 'https://[::ffff:a9fe:a9fe]', 'https://[fe80::1]', 'https://100.100.100.200', 'https://[fd00:ec2::254]']) {
    t.throws(() => parseProviders(oidc(issuer)), /OAUTH_PROVIDERS\[0\]\.issuer points at an address the outbound policy never allows/, issuer)
    t.throws(() => loadConfig({ OAUTH_PROVIDERS: oidc(issuer) }), /Invalid configuration: OAUTH_PROVIDERS\[0\]\.issuer points at an address/, `${issuer}: the process does not start`)
  }
  const github = JSON.stringify([{ name: 'gh', type: 'github', client_id: 'c', client_secret: 's', base_url: 'https://ghe.example.com', api_url: 'https://0.0.0.0/api/v3' }])
  t.throws(() => parseProviders(github), /api_url points at an address the outbound policy never allows \(unspecified\)/)
  for (const issuer of ['https://id.example.com', 'http://127.0.0.1:8080', 'https://10.0.0.9', 'http://localhost:9000']) {
    t.doesNotThrow(() => parseProviders(oidc(issuer)), `${issuer} is fine (a local identity provider too)`)
  }
})

t.test('discovery refuses a document that sends the server to such an address', async (t) => {
  let doc: Record<string, string> = {}
  const server = http.createServer((_req, res) => { res.setHeader('content-type', 'application/json').end(JSON.stringify(doc)) }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const good = { issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` }
  doc = good
  t.match(await discover(issuer), { tokenUrl: `${issuer}/token` }, 'a loopback identity provider is discovered')
  for (const [key, value] of [['token_endpoint', 'http://0.0.0.0:1/token'], ['jwks_uri', 'https://169.254.169.254/jwks'], ['userinfo_endpoint', 'https://[::ffff:a9fe:a9fe]/me']]) {
    doc = { ...good, [key]: value }
    await t.rejects(discover(issuer), /not allowed/, `${key} → ${value}`)
  }
  await t.rejects(discover('https://0x0'), /issuer address 0\.0\.0\.0 is not allowed/, 'and the issuer itself, before any request')
})
