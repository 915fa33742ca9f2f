// Default urls per type, https-only urls (ALLOW_INSECURE_CLUSTERS off), and finding the registry for an
// image. Saving a registry needs no name to resolve (the public hosts below do not resolve here, as on a
// machine without DNS): where a name points is checked when the registry is contacted, which an add does
// at once, so such a registry is saved with status "error" saying so.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app } = await startTestApp(t)
const names: Record<string, string[]> = { 'harbor.example.com': ['10.1.2.3'], 'localhost': ['127.0.0.1'], 'metadata.example.com': ['169.254.169.254'] }
const resolved: string[] = []
Object.assign(app.outboundPolicy, {
  resolve: async (host: string) => { resolved.push(host); if (!names[host]) throw new Error('ENOTFOUND'); return names[host] },
})
const admin = await registerUser(app)
const user = await registerUser(app, { role: 'user' })
const create = (payload: object) => app.inject({ method: 'POST', url: '/v1/api/admin/registries', headers: admin.headers, payload })
const lookup = (image: string) => app.inject({ url: `/v1/api/registries/lookup?image=${encodeURIComponent(image)}`, headers: user.headers })

const ids: Record<string, string> = {}

t.test('hosted registries get their default url; the others need one', async (t) => {
  const expected: Array<[string, string, string]> = [
    ['dockerhub', 'https://registry-1.docker.io', 'docker.io'],
    ['ghcr', 'https://ghcr.io', 'ghcr.io'],
    ['gcr', 'https://gcr.io', 'gcr.io'],
    ['quay', 'https://quay.io', 'quay.io'],
  ]
  for (const [registry_type, url, host] of expected) {
    const res = await create({ name: registry_type, registry_type })
    t.equal(res.statusCode, 201, registry_type)
    t.match(res.json(), { registry_type, url, host, status: 'error', status_message: `url host "${new URL(url).hostname}" does not resolve` })
    ids[registry_type] = res.json().id
  }
  for (const registry_type of ['ecr', 'acr', 'harbor', 'custom']) {
    t.match((await create({ name: `no url ${registry_type}`, registry_type })).json(), { error: `url is required for ${registry_type} registries` })
  }
  const harbor = await create({ name: 'harbor', registry_type: 'harbor', url: 'https://Harbor.example.com:443/' })
  t.match(harbor.json(), { url: 'https://harbor.example.com', host: 'harbor.example.com' })
  ids.harbor = harbor.json().id
  const local = await create({ name: 'local', registry_type: 'custom', url: 'https://localhost:5000' })
  t.match(local.json(), { host: 'localhost:5000' })
  ids.local = local.json().id
  t.ok(resolved.includes('ghcr.io'), 'names are resolved only to contact the registry: saving works offline (the README\'s ghcr.io example)')
})

t.test('urls must be https without ALLOW_INSECURE_CLUSTERS, and never reach metadata addresses', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['http://localhost:5000', /url must use https$/],
    ['https://169.254.169.254', /not allowed/],
    ['https://[::ffff:169.254.169.254]', /not allowed/],
    ['https://user:secret@harbor.example.com', /credentials/],
    ['not a url', /absolute URL/],
  ]
  for (const [url, error] of cases) {
    const res = await create({ name: 'bad', registry_type: 'custom', url })
    t.equal(res.statusCode, 400, url)
    t.match(res.json(), { error }, url)
  }
  const update = await app.inject({ method: 'PUT', url: `/v1/api/admin/registries/${ids.local}`, headers: admin.headers, payload: { url: 'http://localhost:5000' } })
  t.equal(update.statusCode, 400, 'on update too')
})

t.test('where a saved name points is checked when the registry is contacted', async (t) => {
  for (const [url, error] of [['https://metadata.example.com', /169\.254\.169\.254 is not allowed/], ['https://nowhere.example.com', /does not resolve/]] as const) {
    const res = await create({ name: `later ${url}`, registry_type: 'custom', url })
    t.equal(res.statusCode, 201, `${url} is saved`)
    const tested = await app.inject({ method: 'POST', url: `/v1/api/admin/registries/${res.json().id}/test`, headers: admin.headers })
    t.match(tested.json(), { status: 'error', message: error }, `${url} is refused at connection`)
    await app.inject({ method: 'DELETE', url: `/v1/api/admin/registries/${res.json().id}`, headers: admin.headers })
  }
})

t.test('an image finds the registry its host names; Docker Hub when it names none', async (t) => {
  const cases: Array<[string, string]> = [
    ['nginx', 'dockerhub'], ['nginx:1.27', 'dockerhub'], ['library/nginx', 'dockerhub'], ['user/app:tag', 'dockerhub'],
    ['docker.io/user/app', 'dockerhub'], [`nginx@sha256:${'b'.repeat(64)}`, 'dockerhub'],
    ['ghcr.io/o/a:1', 'ghcr'], [`ghcr.io/o/a@sha256:${'c'.repeat(64)}`, 'ghcr'], ['gcr.io/project/app', 'gcr'], ['quay.io/org/app', 'quay'],
    ['harbor.example.com/team/app:2', 'harbor'], ['harbor.example.com:443/team/app', 'harbor'],
    ['localhost:5000/a', 'local'], ['localhost:5000/a/b:c', 'local'],
  ]
  for (const [image, name] of cases) {
    const res = await lookup(image)
    t.equal(res.statusCode, 200, image)
    t.equal(res.json().id, ids[name], `${image} → ${name}`)
  }
})

t.test('no registry for the host is a 404; a malformed image a 400', async (t) => {
  for (const image of ['localhost:5001/a', 'localhost/a', 'registry.gitlab.com/g/p', 'mcr.microsoft.com/dotnet/runtime:8.0']) {
    const res = await lookup(image)
    t.equal(res.statusCode, 404, image)
    t.same(Object.keys(res.json()), ['error'])
  }
  t.match((await lookup('Not An Image')).json(), { error: /not a valid image reference/ })
  t.equal((await lookup('UPPER/case')).statusCode, 400)
})

t.test('several registries for one host: the default wins, else the oldest', async (t) => {
  const mirror = (await create({ name: 'hub mirror', registry_type: 'dockerhub', url: 'https://harbor.example.com' })).json()
  t.equal(mirror.host, 'docker.io', 'a Docker Hub mirror serves docker.io names')
  t.equal((await lookup('nginx')).json().id, ids.dockerhub, 'the oldest')
  await app.inject({ method: 'PUT', url: `/v1/api/admin/registries/${mirror.id}/default`, headers: admin.headers })
  t.equal((await lookup('nginx')).json().id, mirror.id, 'the default')
})
