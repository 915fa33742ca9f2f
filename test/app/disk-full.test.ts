// A full disk under the whole service: the app on the embedded server with its DATA_DIR on a small tmpfs.
// A save the database cannot store answers 507 and is not visible, /readyz says 503 while writes fail,
// and once space is freed both recover without a restart; after a restart the acknowledged save is there
// and the refused one is not. Needs permission to mount a tmpfs (root on Linux); skipped with the reason
// otherwise (test/embedded-mongo/disk-full.test.ts covers the database side with an injected failure).
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFile, mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { promisify } from 'node:util'
import t from 'tap'
import { MongoServerError } from 'mongodb'
import { buildApp } from '../../src/app.ts'
import type { App } from '../../src/app-types.ts'
import { testConfig } from '../../src/config.ts'
import { storageFailure } from '../../src/errors.ts'
import { loginUser, registerUser } from '../helpers/auth.ts'

const run = promisify(execFile)

async function mountTmpfs(bytes: number): Promise<string> {
  if (process.platform !== 'linux') throw new Error('mounting a tmpfs needs Linux')
  const mnt = await mkdtemp(join(tmpdir(), 'app-disk-full-'))
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', mnt])
  } catch (err) {
    await rmdir(mnt)
    throw new Error(`cannot mount a tmpfs here: ${String((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`)
  }
  return mnt
}

/** Appends to `file` in ever smaller pieces until the filesystem has not one free page left. */
async function fill(file: string): Promise<void> {
  // Below a page, appends only fill the filler's own last page, which no other file can use anyway.
  for (let size = 256 * 1024; size >= 4096; size = Math.floor(size / 4)) {
    const chunk = Buffer.alloc(size)
    for (;;) {
      try {
        await appendFile(file, chunk)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break
        throw err
      }
    }
  }
}

t.test('database errors that mean "not stored" become 507 or 503; others are left to the 500 path', async (t) => {
  const full = new MongoServerError({ ok: 0, code: 14031, codeName: 'OutOfDiskSpace', errmsg: "the database's disk is full" })
  const failing = new MongoServerError({ ok: 0, code: 39, codeName: 'FileStreamFailed', errmsg: 'the database could not write to its disk (EIO)' })
  t.match(storageFailure(full), { statusCode: 507, message: "the database's disk is full" })
  t.match(storageFailure(failing), { statusCode: 503, message: 'the database could not store the change' })
  t.match(storageFailure(new Error('saving the workflow failed', { cause: full })), { statusCode: 507 }, 'also when a service wrapped it')
  t.equal(storageFailure(new MongoServerError({ ok: 0, code: 11000, errmsg: 'E11000 duplicate key' })), undefined)
  t.equal(storageFailure(Object.assign(new Error('not from the driver'), { code: 14031 })), undefined)
})

let mnt: string | undefined
let skip: string | false = false
try {
  mnt = await mountTmpfs(8 * 1024 * 1024)
  t.teardown(async () => { await run('umount', [mnt!]); await rmdir(mnt!) })
} catch (err) {
  skip = (err as Error).message
}

t.test('a save on a full disk answers 507 and is not kept; readiness follows; space freed, all works again', { skip }, async (t) => {
  const dataDir = join(mnt!, 'data')
  await mkdir(dataDir)
  const logs: string[] = []
  const secrets = { JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64') }
  const start = async (): Promise<App> => {
    const config = testConfig({
      LOG_LEVEL: 'info', EMBEDDED_DB: 'disk', DATA_DIR: dataDir, ...secrets,
      CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *',
    })
    const logStream = new Writable({ write(chunk, _enc, done) { logs.push(String(chunk)); done() } })
    const app = await buildApp(config, { logStream })
    await app.ready()
    return app
  }
  let app = await start()
  let closed = false
  t.teardown(async () => { if (!closed) await app.close() })
  const alice = await registerUser(app)
  const created = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: alice.headers, payload: { name: 'shop', description: 'first' } })
  t.equal(created.statusCode, 201)
  const id = created.json().id as string
  const url = `/v1/api/workflows/${id}`
  t.equal((await app.inject({ url: '/readyz' })).statusCode, 200)

  const filler = join(mnt!, 'filler')
  await fill(filler)
  // Larger than the slack a filesystem page of the journal can hold, so it needs space the disk lacks.
  const refused = await app.inject({ method: 'PUT', url, headers: alice.headers, payload: { description: 'refused', metadata: { note: 'r'.repeat(20_000) } } })
  t.equal(refused.statusCode, 507)
  t.same(refused.json(), { error: "the database's disk is full" }, 'the cause, and no driver text')

  const read = await app.inject({ url, headers: alice.headers })
  t.equal(read.statusCode, 200, 'reads keep working')
  t.match(read.json(), { description: 'first', metadata: {} })
  t.notOk(read.json().metadata.note, 'the refused save is not visible')
  const notReady = await app.inject({ url: '/readyz' })
  t.equal(notReady.statusCode, 503)
  t.same(notReady.json(), { error: "the database's disk is full" })
  t.equal((await app.inject({ url: '/readyz' })).statusCode, 503, 'still not ready while the disk is full')
  t.match(logs.join(''), /the database refused a write/)
  t.notMatch(logs.join(''), /"msg":"unhandled error"/, 'a refused write is not logged as a bug')

  await rm(filler)
  t.equal((await app.inject({ url: '/readyz' })).statusCode, 200, 'ready again once space is back, without a restart')
  const saved = await app.inject({ method: 'PUT', url, headers: alice.headers, payload: { description: 'second', metadata: { note: 's'.repeat(20_000) } } })
  t.equal(saved.statusCode, 200, 'the same save works once space is back')
  t.equal((await app.inject({ url: '/readyz' })).statusCode, 200)

  await app.close()
  closed = true
  app = await start()
  closed = false
  const { token } = await loginUser(app, alice.email, alice.password)
  const after = await app.inject({ url, headers: { authorization: `Bearer ${token}` } })
  t.equal(after.statusCode, 200)
  t.match(after.json(), { description: 'second', metadata: { note: 's'.repeat(20_000) } }, 'the acknowledged save survives a restart')
})
