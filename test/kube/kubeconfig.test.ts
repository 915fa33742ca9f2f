import t from 'tap'
import { stringify } from 'yaml'
import { readUserKubeconfig, buildKubeConfig } from '../../src/kube/kubeconfig.ts'
import { normaliseCredentials, pemToBase64 } from '../../src/kube/credentials.ts'
import { OutboundPolicy } from '../../src/net/outbound-policy.ts'

const policy = new OutboundPolicy({ allowInsecure: false, allowCidrs: [] })

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----'
const kubeconfig = (user: Record<string, unknown>, extra: Record<string, unknown> = {}, cluster: Record<string, unknown> = {}) => stringify({
  apiVersion: 'v1', kind: 'Config', 'current-context': 'dev',
  clusters: [{ name: 'c1', cluster: { server: 'https://10.0.0.1:6443/', 'certificate-authority-data': 'Q0E=', ...cluster } }, { name: 'c2', cluster: { server: 'https://10.0.0.2:6443' } }],
  users: [{ name: 'u1', user }, { name: 'u2', user: { token: 'second-token' } }],
  contexts: [{ name: 'dev', context: { cluster: 'c1', user: 'u1', namespace: 'team' } }, { name: 'prod', context: { cluster: 'c2', user: 'u2' } }],
  ...extra,
})

t.test('the current context is read; another can be chosen', async (t) => {
  t.match(readUserKubeconfig(kubeconfig({ token: 'abc' })), { server: 'https://10.0.0.1:6443', caData: 'Q0E=', token: 'abc', namespace: 'team', skipTLSVerify: false })
  t.match(readUserKubeconfig(kubeconfig({ token: 'abc' }), 'prod'), { server: 'https://10.0.0.2:6443', token: 'second-token' })
  t.throws(() => readUserKubeconfig(kubeconfig({ token: 'abc' }), 'staging'), /no context "staging"/)
})

t.test('anything that runs a program, reads a file or reroutes is refused', async (t) => {
  const cases: Array<[string, RegExp]> = [
    [kubeconfig({ exec: { command: '/bin/sh', args: ['-c', 'id'] } }), /exec plugins are not allowed/],
    [kubeconfig({ 'auth-provider': { name: 'gcp' } }), /auth-provider/],
    [kubeconfig({ 'token-file': '/etc/shadow' }), /file paths are not allowed/],
    [kubeconfig({ 'client-certificate': '/root/c.pem', 'client-key': '/root/k.pem' }), /file paths are not allowed/],
    [kubeconfig({ token: 'x' }, {}, { 'certificate-authority': '/etc/ssl/ca.pem' }), /file paths are not allowed/],
    [kubeconfig({ token: 'x' }, {}, { 'proxy-url': 'http://169.254.169.254' }), /proxy-url/],
    [kubeconfig({ token: 'x', as: 'system:admin' }), /impersonation/],
    // Refused even in a context that is not the one used.
    [kubeconfig({ token: 'x' }, { users: [{ name: 'u1', user: { token: 'x' } }, { name: 'u2', user: { exec: { command: 'curl' } } }] }), /exec/],
  ]
  for (const [text, message] of cases) t.throws(() => readUserKubeconfig(text), message)
})

t.test('empty credentials never fall back to anything', async (t) => {
  t.throws(() => readUserKubeconfig(kubeconfig({})), /has no credentials/)
  t.throws(() => normaliseCredentials({ auth_type: 'token', token: '  ' }), /credentials.token is required/)
  t.throws(() => normaliseCredentials({ auth_type: 'certificate', client_cert_data: PEM, client_key_data: '' }), /client_key_data is required/)
  t.throws(() => readUserKubeconfig('{{{'), /not valid YAML/)
  t.throws(() => readUserKubeconfig('a: &a [*a, *a]'), /not valid YAML|no context/)
})

t.test('PEM is accepted raw or base64 and kept as base64', async (t) => {
  const b64 = Buffer.from(PEM + '\n').toString('base64')
  t.equal(pemToBase64(PEM, 'ca_data'), b64)
  t.equal(pemToBase64(b64, 'ca_data'), b64)
  t.throws(() => pemToBase64('not pem', 'credentials.ca_data'), /credentials.ca_data must be PEM data/)
})

t.test('each auth type builds a one-context KubeConfig with only its own identity', async (t) => {
  const kc = await buildKubeConfig('https://10.9.9.9:6443', { auth_type: 'token', token: 'tok' }, policy)
  t.equal(kc.getCurrentCluster()?.server, 'https://10.9.9.9:6443')
  t.equal(kc.getCurrentUser()?.token, 'tok')
  t.equal(kc.getContexts().length, 1)
  const sa = await buildKubeConfig('https://10.9.9.9:6443', { auth_type: 'serviceaccount', token: 'sa', namespace: 'apps' }, policy)
  t.equal(sa.getContextObject(sa.getCurrentContext())?.namespace, 'apps')
  const fromFile = await buildKubeConfig('ignored', { auth_type: 'kubeconfig', kubeconfig: kubeconfig({ token: 'abc' }) }, policy)
  t.equal(fromFile.getCurrentCluster()?.server, 'https://10.0.0.1:6443', 'a kubeconfig brings its own server')
  await t.rejects(buildKubeConfig('https://x', { auth_type: 'oidc', issuer_url: 'https://i', client_id: 'c', refresh_token: 'r' }, policy), /no ID token/)
})
