// The pushed image is confirmed against the registry before a build is completed: the manifest HEAD with
// the stored login (Basic, or the Bearer handshake with pull scope) gives the digest; a registry that does
// not hold the tag, or holds another digest for it, fails the build at push with a clear message.
import t from 'tap'
import { createHash } from 'node:crypto'
import { confirmManifest } from '../../src/net/registry-client.ts'
import { OutboundPolicy } from '../../src/net/outbound-policy.ts'
import { startTestRegistry, type TestRegistry } from '../helpers/test-registry.ts'
import { buildFixture } from './fixture.ts'

const policy = new OutboundPolicy({ allowInsecure: true, allowCidrs: [] })
const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`

/** Pushes a minimal image (a config blob and a manifest naming it) by hand, as a client would. */
async function push(reg: TestRegistry, name: string, tag: string, auth: string): Promise<string> {
  const config = Buffer.from('{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}')
  const up = await fetch(`${reg.url}/v2/${name}/blobs/uploads/?digest=${sha(config)}`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: config })
  if (up.status !== 201) throw new Error(`blob upload: ${up.status}`)
  const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha(config), size: config.length }, layers: [] }))
  const put = await fetch(`${reg.url}/v2/${name}/manifests/${tag}`, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/vnd.oci.image.manifest.v1+json' }, body: manifest })
  if (put.status !== 201) throw new Error(`manifest put: ${put.status}`)
  return sha(manifest)
}

t.test('confirmManifest: Basic and Bearer registries, a missing tag, refused credentials', async (t) => {
  const basic = await startTestRegistry({ auth: 'basic' })
  const bearer = await startTestRegistry({ auth: 'bearer' })
  t.teardown(async () => { await basic.close(); await bearer.close() })
  const login = (r: TestRegistry) => `Basic ${Buffer.from(`${r.username}:${r.password}`).toString('base64')}`
  const digest = await push(basic, 'team/x', 'v1', login(basic))
  const creds = { username: basic.username, secret: basic.password }
  t.same(await confirmManifest(basic.url, 'team/x', 'v1', creds, { policy }), { ok: true, digest })
  t.match(await confirmManifest(basic.url, 'team/x', 'nope', creds, { policy }), { ok: false, message: /does not have team\/x:nope \(404\): the push did not arrive/ })
  t.match(await confirmManifest(basic.url, 'team/x', 'v1', { username: basic.username, secret: 'wrong' }, { policy }), { ok: false, message: /refused the credentials \(401\)/ })
  t.match(await confirmManifest(basic.url, 'team/x', 'v1', null, { policy }), { ok: false, message: /requires credentials/ })

  // Bearer: the registry's token service is asked for a pull token for this repository.
  const tokenRes = await fetch(`${bearer.url}/token?service=test-registry&scope=repository:team/y:pull,push`, { headers: { authorization: login(bearer) } })
  const token = (await tokenRes.json() as { token: string }).token
  const bd = await push(bearer, 'team/y', 'v2', `Bearer ${token}`)
  t.same(await confirmManifest(bearer.url, 'team/y', 'v2', { username: bearer.username, secret: bearer.password }, { policy }), { ok: true, digest: bd })
  t.ok(bearer.requests.some((r) => r.method === 'HEAD' && r.path === '/v2/team/y/manifests/v2' && r.status === 200 && r.auth === 'bearer'))
  t.notOk(JSON.stringify(bearer.requests).includes(bearer.password))
})

t.test('a build whose digest the registry does not confirm fails at push', async (t) => {
  const f = await buildFixture(t)
  const service = f.app.services.builds as unknown as { deps: { fetch?: typeof fetch } }
  t.teardown(() => { delete service.deps.fetch })
  // The registry answers the confirmation with another digest (the tag was pushed over meanwhile).
  const other = `sha256:${'e'.repeat(64)}`
  service.deps.fetch = async (input, init) => {
    const res = await fetch(input, init)
    if (init?.method !== 'HEAD' || res.status !== 200) return res
    const headers = new Headers(res.headers)
    headers.set('docker-content-digest', other)
    return new Response(null, { status: 200, headers })
  }
  const swapped = await f.start({ image_name: 'team/swapped' })
  const a = await f.until(swapped.body.id, (b) => b.status === 'failed' || b.status === 'completed')
  t.equal(a.status, 'failed')
  t.equal(a.phase, 'push')
  t.match(a.error, new RegExp(`^the registry holds ${other} for .*team/swapped:v1, not the sha256:[a-f0-9]{64} the builder pushed`))
  t.equal(a.image_digest, null)

  // The registry says it does not have the tag at all.
  service.deps.fetch = async (input, init) => (init?.method === 'HEAD' ? new Response(null, { status: 404 }) : fetch(input, init))
  const lost = await f.start({ image_name: 'team/lost' })
  const b = await f.until(lost.body.id, (x) => x.status === 'failed' || x.status === 'completed')
  t.equal(b.status, 'failed')
  t.match(b.error, /^the pushed image could not be confirmed: the registry does not have team\/lost:v1 \(404\)/)
  t.notOk(await f.exists('secret', `build-${lost.body.id}`))
})
