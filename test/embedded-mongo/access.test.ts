// The embedded server has no authentication, so it must not be reachable by other local users: it
// listens on a Unix socket (0600) inside a private directory (0700), never on TCP unless asked, and keeps
// its files owner-only.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import t from 'tap'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined }
const mode = async (path: string): Promise<number> => (await stat(path)).mode & 0o777

t.test('by default the server listens on an owner-only Unix socket and no TCP port', async (t) => {
  const server = await startEmbeddedMongoServer({ storage: 'memory', logger: quiet })
  t.teardown(() => server.close())
  t.ok(server.socketPath, 'a socket path')
  t.equal(server.port, undefined, 'no TCP port')
  t.notMatch(server.uri, /127\.0\.0\.1|localhost|:\d+\//, 'the URI names no TCP address')
  t.equal((await stat(server.socketPath!)).isSocket(), true)
  t.equal(await mode(server.socketPath!), 0o600, 'socket is read/write for the owner only')
  t.equal(await mode(dirname(server.socketPath!)), 0o700, 'its directory is the owner\'s only')

  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  t.teardown(() => client.close())
  await client.db('a').collection('b').insertOne({ secret: 'hash' })
  t.equal((await client.db('a').collection('b').findOne({}))?.secret, 'hash', 'the driver works over the socket')
})

// File modes do not stop root, so the proof that another user is kept out needs a process running as
// someone else, which only root can start.
const asRoot = process.getuid?.() === 0
t.test('another local user cannot connect to the socket', { skip: asRoot ? false : 'switching user needs root' }, async (t) => {
  const server = await startEmbeddedMongoServer({ storage: 'memory', logger: quiet })
  t.teardown(() => server.close())
  const probe = `require('net').connect(${JSON.stringify(server.socketPath)}).on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })`
  const child = spawn(process.execPath, ['-e', probe], { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'inherit'], cwd: '/' })
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  await once(child, 'exit')
  t.equal(out.trim(), 'EACCES', 'user nobody is refused')
})

t.test('disk storage keeps its directory and files owner-only', async (t) => {
  const dir = join(await mkdtemp(join(tmpdir(), 'em-access-')), 'data')
  t.teardown(() => rm(dirname(dir), { recursive: true, force: true }))
  const server = await startEmbeddedMongoServer({ storage: 'disk', dataDir: dir, logger: quiet, compactJournalBytes: 1 })
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  for (let i = 0; i < 3; i++) await client.db('a').collection('b').insertOne({ i })
  await client.close()
  await server.close()
  t.equal(await mode(dir), 0o700)
  const files = await readdir(dir)
  t.ok(files.some((f) => f.startsWith('journal-')), 'a journal was written')
  for (const f of files) t.equal(await mode(join(dir, f)), 0o600, f)
})

t.test('TCP only when asked for, and then on loopback', async (t) => {
  const server = await startEmbeddedMongoServer({ storage: 'memory', logger: quiet, tcp: {} })
  t.teardown(() => server.close())
  t.equal(server.socketPath, undefined)
  t.match(server.uri, new RegExp(`^mongodb://127\\.0\\.0\\.1:${server.port}/`))
})

t.test('npm run embedded-db prints a socket URI the driver connects to, and stops on SIGTERM', async (t) => {
  const cli = new URL('../../src/embedded-mongo/cli.ts', import.meta.url).pathname
  const child = spawn(process.execPath, ['--import', 'tsx', cli], {
    env: { ...process.env, EMBEDDED_DB: 'memory', EMBEDDED_DB_PORT: undefined }, stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = once(child, 'exit')
  let out = ''
  const uri = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) resolve(out.split('\n')[0]!) })
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)))
  })
  t.match(uri, /^mongodb:\/\/%2F.*mongod\.sock\/\?directConnection=true$/)
  const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 })
  await client.db('a').collection('b').insertOne({ x: 1 })
  t.equal(await client.db('a').collection('b').countDocuments(), 1)
  await client.close()
  child.kill('SIGTERM')
  t.equal((await exited)[0], 0)
})
