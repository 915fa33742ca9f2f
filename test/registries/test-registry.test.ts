// The push-capable test registry (test/helpers/test-registry.ts) speaks the Registry v2 protocol the way
// clients expect: uploads in every style, digest verification, manifests by tag and digest, and refusals
// with the challenge a client needs to authenticate.
import t from 'tap'
import { createHash } from 'node:crypto'
import { startTestRegistry, type TestRegistry } from '../helpers/test-registry.ts'

const sha = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (r: Response): Promise<any> => r.json()
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`

async function registry(opts: Parameters<typeof startTestRegistry>[0]) {
  const r = await startTestRegistry(opts)
  t.teardown(() => r.close())
  return r
}

async function pushBlob(r: TestRegistry, name: string, data: Buffer, auth: string): Promise<Response> {
  const start = await fetch(`${r.url}/v2/${name}/blobs/uploads/`, { method: 'POST', headers: { authorization: auth } })
  const loc = new URL(start.headers.get('location')!, r.url)
  loc.searchParams.set('digest', sha(data))
  return fetch(loc, { method: 'PUT', body: data, headers: { authorization: auth, 'content-type': 'application/octet-stream' } })
}

function manifestOf(config: Buffer, layer: Buffer): Buffer {
  return Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
    config: { mediaType: 'application/vnd.docker.container.image.v1+json', digest: sha(config), size: config.length },
    layers: [{ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', digest: sha(layer), size: layer.length }],
  }))
}

t.test('basic: push blobs and a manifest, then HEAD and GET it by tag and by digest', async (t) => {
  const r = await registry({ auth: 'basic' })
  const auth = basic(r.username, r.password)
  const config = Buffer.from('{"architecture":"amd64","os":"linux"}')
  const layer = Buffer.from('layer bytes')
  t.equal((await pushBlob(r, 'team/app', config, auth)).status, 201)
  // Chunked: two PATCHes with Content-Range, then a PUT with the digest.
  const start = await fetch(`${r.url}/v2/team/app/blobs/uploads/`, { method: 'POST', headers: { authorization: auth } })
  t.equal(start.status, 202)
  const p1 = await fetch(new URL(start.headers.get('location')!, r.url), { method: 'PATCH', body: layer.subarray(0, 5), headers: { authorization: auth, 'content-range': '0-4' } })
  t.equal(p1.status, 202)
  t.equal(p1.headers.get('range'), '0-4')
  const p2 = await fetch(new URL(p1.headers.get('location')!, r.url), { method: 'PATCH', body: layer.subarray(5), headers: { authorization: auth, 'content-range': `5-${layer.length - 1}` } })
  const done = new URL(p2.headers.get('location')!, r.url)
  done.searchParams.set('digest', sha(layer))
  const put = await fetch(done, { method: 'PUT', headers: { authorization: auth } })
  t.equal(put.status, 201)
  t.equal(put.headers.get('docker-content-digest'), sha(layer))

  const head = await fetch(`${r.url}/v2/team/app/blobs/${sha(layer)}`, { method: 'HEAD', headers: { authorization: auth } })
  t.equal(head.status, 200)
  t.equal(head.headers.get('content-length'), String(layer.length))

  const manifest = manifestOf(config, layer)
  const mput = await fetch(`${r.url}/v2/team/app/manifests/v1`, { method: 'PUT', body: manifest, headers: { authorization: auth, 'content-type': 'application/vnd.docker.distribution.manifest.v2+json' } })
  t.equal(mput.status, 201)
  t.equal(mput.headers.get('docker-content-digest'), sha(manifest))
  for (const ref of ['v1', sha(manifest)]) {
    const h = await fetch(`${r.url}/v2/team/app/manifests/${ref}`, { method: 'HEAD', headers: { authorization: auth } })
    t.equal(h.status, 200, `HEAD ${ref}`)
    t.equal(h.headers.get('docker-content-digest'), sha(manifest))
    t.equal(h.headers.get('content-type'), 'application/vnd.docker.distribution.manifest.v2+json')
  }
  const g = await fetch(`${r.url}/v2/team/app/manifests/v1`, { headers: { authorization: auth } })
  t.same(Buffer.from(await g.arrayBuffer()), manifest, 'GET returns the exact bytes pushed')
  t.same(await (await fetch(`${r.url}/v2/team/app/tags/list`, { headers: { authorization: auth } })).json(), { name: 'team/app', tags: ['v1'] })
  t.same(r.tags('team/app'), ['v1'])
  t.equal(r.manifest('team/app', 'v1')?.digest, sha(manifest))
  t.equal((await fetch(`${r.url}/v2/team/app/manifests/v2`, { method: 'HEAD', headers: { authorization: auth } })).status, 404)
  t.ok(r.requests.every((q) => q.auth === 'basic'))
})

t.test('basic: refusals carry a Basic challenge; nothing is stored', async (t) => {
  const r = await registry({ auth: 'basic' })
  for (const auth of [undefined, basic(r.username, 'wrong')]) {
    const res = await fetch(`${r.url}/v2/team/app/blobs/uploads/`, { method: 'POST', headers: auth ? { authorization: auth } : {} })
    t.equal(res.status, 401)
    t.equal(res.headers.get('www-authenticate'), 'Basic realm="test-registry"')
    t.equal((await json(res)).errors[0].code, 'UNAUTHORIZED')
  }
  t.equal((await fetch(`${r.url}/v2/`)).status, 401)
  t.equal((await fetch(`${r.url}/v2/`, { headers: { authorization: basic(r.username, r.password) } })).status, 200)
})

t.test('digests are verified: a wrong one is 400 DIGEST_INVALID, and a manifest must name pushed blobs', async (t) => {
  const r = await registry({ auth: 'none' })
  const start = await fetch(`${r.url}/v2/app/blobs/uploads/`, { method: 'POST' })
  const loc = new URL(start.headers.get('location')!, r.url)
  loc.searchParams.set('digest', sha('something else'))
  const bad = await fetch(loc, { method: 'PUT', body: 'data' })
  t.equal(bad.status, 400)
  t.equal((await json(bad)).errors[0].code, 'DIGEST_INVALID')
  t.equal(r.blob(sha('data')), undefined)
  // Monolithic POST with ?digest=.
  const mono = await fetch(`${r.url}/v2/app/blobs/uploads/?digest=${sha('cfg')}`, { method: 'POST', body: 'cfg' })
  t.equal(mono.status, 201)
  const m = manifestOf(Buffer.from('cfg'), Buffer.from('missing layer'))
  const res = await fetch(`${r.url}/v2/app/manifests/latest`, { method: 'PUT', body: m, headers: { 'content-type': 'application/vnd.docker.distribution.manifest.v2+json' } })
  t.equal(res.status, 400)
  t.equal((await json(res)).errors[0].code, 'MANIFEST_BLOB_UNKNOWN')
  const byWrongDigest = await fetch(`${r.url}/v2/app/manifests/${sha('nope')}`, { method: 'PUT', body: '{}', headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' } })
  t.equal((await json(byWrongDigest)).errors[0].code, 'DIGEST_INVALID')
  // A blob pushed to one repository is not visible from another until mounted.
  t.equal((await fetch(`${r.url}/v2/other/blobs/${sha('cfg')}`, { method: 'HEAD' })).status, 404)
  t.equal((await fetch(`${r.url}/v2/other/blobs/uploads/?mount=${sha('cfg')}&from=app`, { method: 'POST' })).status, 201)
  t.equal((await fetch(`${r.url}/v2/other/blobs/${sha('cfg')}`, { method: 'HEAD' })).status, 200)
})

t.test('bearer: challenge with scope, token service checks Basic, tokens are scoped to a repository', async (t) => {
  const r = await registry({ auth: 'bearer' })
  const first = await fetch(`${r.url}/v2/team/app/blobs/uploads/`, { method: 'POST' })
  t.equal(first.status, 401)
  const ch = first.headers.get('www-authenticate')!
  t.equal(ch, `Bearer realm="${r.url}/token",service="test-registry",scope="repository:team/app:pull,push"`)
  const refused = await fetch(`${r.url}/token?service=test-registry&scope=repository:team/app:pull,push`, { headers: { authorization: basic(r.username, 'wrong') } })
  t.equal(refused.status, 401)
  const tok = await fetch(`${r.url}/token?service=test-registry&scope=repository:team/app:pull,push`, { headers: { authorization: basic(r.username, r.password) } })
  t.equal(tok.status, 200)
  const { token, access_token } = await json(tok)
  t.equal(token, access_token)
  const auth = `Bearer ${token}`
  t.equal((await pushBlob(r, 'team/app', Buffer.from('x'), auth)).status, 201)
  const other = await fetch(`${r.url}/v2/team/other/blobs/uploads/`, { method: 'POST', headers: { authorization: auth } })
  t.equal(other.status, 401, 'a token for one repository does not open another')
  t.match(other.headers.get('www-authenticate'), /error="insufficient_scope"/)
  const pullOnly = await json(await fetch(`${r.url}/token?service=test-registry&scope=repository:team/app:pull`, { headers: { authorization: basic(r.username, r.password) } }))
  t.equal((await fetch(`${r.url}/v2/team/app/blobs/uploads/`, { method: 'POST', headers: { authorization: `Bearer ${pullOnly.token}` } })).status, 401, 'pull scope cannot push')
  t.equal((await fetch(`${r.url}/v2/team/app/blobs/${sha('x')}`, { method: 'HEAD', headers: { authorization: `Bearer ${pullOnly.token}` } })).status, 200)
  t.notOk(r.requests.some((q) => JSON.stringify(q).includes(r.password)), 'the request log holds no credential')
})

t.test('dockerConfigJson is the auths entry a build Secret carries', async (t) => {
  const r = await registry({ auth: 'basic', username: 'ci', password: 'pw' })
  t.same(JSON.parse(r.dockerConfigJson()), { auths: { [r.host]: { auth: Buffer.from('ci:pw').toString('base64') } } })
  t.same(JSON.parse(r.dockerConfigJson({ username: 'ci', password: 'bad' })), { auths: { [r.host]: { auth: Buffer.from('ci:bad').toString('base64') } } })
})
