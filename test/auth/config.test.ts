// Sign-in configuration: the JWT secret per environment, and OAUTH_PROVIDERS validation.
import t from 'tap'
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { createHmac } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, ConfigError } from '../../src/config.ts'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

t.test('production refuses to start without JWT_SECRET, in one line naming it', async (t) => {
  const err = t.throws(() => loadConfig({ NODE_ENV: 'production' })) as Error
  t.type(err, ConfigError)
  t.match(err.message, /^Invalid configuration: JWT_SECRET is required in production/)
  t.notMatch(err.message, /\n/)
  t.ok(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 's'.repeat(32), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }))
  const short = t.throws(() => loadConfig({ JWT_SECRET: 'hunter2-too-short' })) as Error
  t.match(short.message, /JWT_SECRET/)
  t.notMatch(short.message, /hunter2/, 'the value is not echoed')
  t.ok(loadConfig({}), 'development needs nothing')
})

t.test('development without JWT_SECRET keeps a generated key in DATA_DIR/jwt-secret (0600) and warns', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cwo-secret-'))
  const first = await startTestApp(t, { NODE_ENV: 'development', DATA_DIR: dir })
  const file = join(dir, 'jwt-secret')
  const secret = readFileSync(file, 'utf8').trim()
  t.ok(secret.length >= 32)
  t.equal(statSync(file).mode & 0o777, 0o600)
  t.ok(first.logs.some((l) => l.includes('"level":40') && l.includes('JWT_SECRET is not set')), 'a warning is logged')
  t.notOk(first.logs.join('').includes(secret), 'the key itself is not logged')
  const signedWith = (token: string, key: string) => {
    const [h, p, sig] = token.split('.')
    return createHmac('sha256', key).update(`${h}.${p}`).digest('base64url') === sig
  }
  const user = await registerUser(first.app)
  t.ok(signedWith(user.token, secret), 'tokens are signed with the kept key')

  // A restart on the same DATA_DIR reuses the key, so tokens survive restarts.
  const second = await startTestApp(t, { NODE_ENV: 'development', DATA_DIR: dir })
  t.equal(readFileSync(file, 'utf8').trim(), secret, 'the file is not replaced')
  t.ok(second.logs.some((l) => l.includes('using the development value kept in this file')))
  t.ok(signedWith((await registerUser(second.app)).token, secret), 'the restarted service signs with the same key')
})

t.test('test environment without JWT_SECRET uses a random in-memory key and writes nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cwo-secret-'))
  const { app } = await startTestApp(t, { DATA_DIR: dir })
  t.throws(() => statSync(join(dir, 'jwt-secret')))
  const user = await registerUser(app)
  t.equal((await app.inject({ url: '/v1/api/profile', headers: user.headers })).statusCode, 200)
})

t.test('OAUTH_PROVIDERS is checked at start-up, naming the problem but never a value', async (t) => {
  const p = { name: 'corp', type: 'oidc', client_id: 'id', client_secret: 'sup3r-s3cret', issuer: 'https://id.example.com' }
  const cases: Array<[string, RegExp]> = [
    ['{not json', /OAUTH_PROVIDERS is not valid JSON/],
    [JSON.stringify(p), /must be a JSON array/],
    [JSON.stringify([{ ...p, issuer: undefined }]), /OAUTH_PROVIDERS\[0\]\.issuer is required for type oidc/],
    [JSON.stringify([{ ...p, issuer: 'http://id.example.com' }]), /issuer must be https/],
    [JSON.stringify([{ ...p, type: 'myspace' }]), /OAUTH_PROVIDERS\[0\]\.type/],
    [JSON.stringify([{ ...p, name: 'Bad Name' }]), /OAUTH_PROVIDERS\[0\]\.name/],
    [JSON.stringify([p, p]), /OAUTH_PROVIDERS\[1\]\.name is used by two providers/],
    [JSON.stringify([{ ...p, client_secret: undefined }]), /OAUTH_PROVIDERS\[0\]/],
    [JSON.stringify([{ ...p, extra: 'sup3r-s3cret' }]), /OAUTH_PROVIDERS\[0\]/],
    [JSON.stringify([{ ...p, type: 'github', issuer: undefined, api_url: 'ftp://x' }]), /api_url/],
  ]
  for (const [value, message] of cases) {
    const err = t.throws(() => loadConfig({ OAUTH_PROVIDERS: value }), value.slice(0, 40)) as Error
    t.type(err, ConfigError)
    t.match(err.message, message)
    t.notMatch(err.message, /sup3r-s3cret/)
    t.notMatch(err.message, /\n/)
  }
  t.ok(loadConfig({ OAUTH_PROVIDERS: JSON.stringify([p, { name: 'gh', type: 'github', client_id: 'a', client_secret: 'b' }, { name: 'local', type: 'oidc', client_id: 'a', client_secret: 'b', issuer: 'http://127.0.0.1:9999' }]) }))
})
