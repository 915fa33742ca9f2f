import t from 'tap'
import { parseImageReference, parseChallenges, normaliseHost } from '../../src/net/registry-client.ts'

const DIGEST = `sha256:${'a'.repeat(64)}`

t.test('a first path component is a registry host only when it looks like one', async (t) => {
  const cases: Array<[string, string, string, string | null, string | null]> = [
    ['nginx', 'docker.io', 'library/nginx', null, null],
    ['nginx:1.27', 'docker.io', 'library/nginx', '1.27', null],
    ['library/nginx', 'docker.io', 'library/nginx', null, null],
    ['user/app:tag', 'docker.io', 'user/app', 'tag', null],
    ['docker.io/nginx', 'docker.io', 'library/nginx', null, null],
    ['index.docker.io/user/app', 'docker.io', 'user/app', null, null],
    ['ghcr.io/o/a:1', 'ghcr.io', 'o/a', '1', null],
    ['GHCR.io/o/a', 'ghcr.io', 'o/a', null, null],
    ['localhost:5000/a', 'localhost:5000', 'a', null, null],
    ['localhost/a', 'localhost', 'a', null, null],
    ['registry.example.com:443/team/app', 'registry.example.com', 'team/app', null, null],
    ['10.0.0.5:5000/a/b/c:v2', '10.0.0.5:5000', 'a/b/c', 'v2', null],
    ['[::1]:5000/a', '[::1]:5000', 'a', null, null],
    [`nginx@${DIGEST}`, 'docker.io', 'library/nginx', null, DIGEST],
    [`ghcr.io/o/a:1@${DIGEST}`, 'ghcr.io', 'o/a', '1', DIGEST],
    [`localhost:5000/a@${DIGEST}`, 'localhost:5000', 'a', null, DIGEST],
    ['my_org/my-app__x.y', 'docker.io', 'my_org/my-app__x.y', null, null],
    ['  nginx  ', 'docker.io', 'library/nginx', null, null],
  ]
  for (const [ref, host, repository, tag, digest] of cases) {
    t.same(parseImageReference(ref), { host, repository, tag, digest }, ref)
  }
})

t.test('what is not a reference is a 400 naming the reason', async (t) => {
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['   ', /empty/],
    ['ngi nx', /whitespace/],
    ['Nginx', /lower-case/],
    ['user/App', /lower-case/],
    ['nginx:', /tag is malformed/],
    ['nginx:-x', /tag is malformed/],
    ['nginx@sha256:xyz', /digest is malformed/],
    ['ghcr.io/', /repository name is missing/],
    ['bad_host.io:port/a', /host is malformed/],
    ['a//b', /lower-case/],
    [`${'a'.repeat(256)}`, /longer than 255/],
  ]
  for (const [ref, why] of bad) {
    t.throws(() => parseImageReference(ref), { statusCode: 400, message: why }, JSON.stringify(ref))
  }
})

t.test('hosts compare without case, Docker Hub aliases and the https port', async (t) => {
  t.equal(normaliseHost('Registry-1.Docker.io'), 'docker.io')
  t.equal(normaliseHost('quay.io:443'), 'quay.io')
  t.equal(normaliseHost('localhost:5000'), 'localhost:5000')
})

t.test('WWW-Authenticate challenges are parsed with quoting, escapes and several per header', async (t) => {
  t.same(parseChallenges('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull,push"'), [
    { scheme: 'bearer', params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/nginx:pull,push' } },
  ])
  t.same(parseChallenges('Basic realm="Registry \\"Realm\\""'), [{ scheme: 'basic', params: { realm: 'Registry "Realm"' } }])
  t.same(parseChallenges('Basic realm="x", Bearer realm="https://a/token", service=reg'), [
    { scheme: 'basic', params: { realm: 'x' } },
    { scheme: 'bearer', params: { realm: 'https://a/token', service: 'reg' } },
  ])
  t.same(parseChallenges('Negotiate'), [], 'unknown schemes are left out')
  t.same(parseChallenges(null), [])
})
