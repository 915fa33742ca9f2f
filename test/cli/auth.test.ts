// cwo login | logout | context | whoami against the live service: the token stored per server in a file only
// its user reads (0600 in a 0700 directory) and never printed, commands working from it without CWO_TOKEN,
// the API's refusal of a wrong password, a password never taken from a flag, switching between servers.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import t from 'tap'
import YAML from 'yaml'
import { registerUser } from '../helpers/auth.ts'
import { startCliWorld, type CliResult } from './harness.ts'

const w = await startCliWorld(t)
const alice = await registerUser(w.app.app)
const bob = await registerUser(w.app.app)
const port = new URL(w.server).port
// Two servers for the store: the same service under two names (its key is the URL), a user on each.
const serverA = `http://127.0.0.1:${port}`
const serverB = `http://localhost:${port}`

let n = 0
/** A fresh config file (in a directory cwo creates), no CWO_TOKEN and no CWO_SERVER: only what login stored. */
const fresh = () => ({ CWO_CONFIG: join(w.dir, `home${++n}`, 'cwo', 'config.json'), CWO_TOKEN: undefined, CWO_SERVER: undefined })
const noToken = (r: CliResult, ...tokens: string[]) => tokens.every((tok) => !r.stdout.includes(tok) && !r.stderr.includes(tok))

t.test('login stores the token 0600 in a 0700 directory, prints none, and commands work without CWO_TOKEN', async (t) => {
  const env = fresh()
  const r = await w.cwo(['login', '--server', serverA, '--email', alice.email, '--password-stdin'], { env, stdin: `${alice.password}\n` })
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout, '')
  t.equal(r.stderr, `logged in to ${serverA} as ${alice.email}\n`)
  t.equal((await stat(env.CWO_CONFIG)).mode & 0o777, 0o600, 'the file: its user only')
  t.equal((await stat(dirname(env.CWO_CONFIG))).mode & 0o777, 0o700, 'the directory: its user only')
  const stored = JSON.parse(await readFile(env.CWO_CONFIG, 'utf8'))
  t.equal(stored.current, serverA)
  const token = stored.servers[serverA].token as string
  t.ok(token.length > 20, 'a token is stored')
  t.ok(noToken(r, token))

  // No --server, no CWO_SERVER, no CWO_TOKEN: the last login's server and its stored token.
  const me = await w.cwo(['whoami', '-o', 'json'], { env })
  t.equal(me.code, 0, me.stderr)
  t.equal(JSON.parse(me.stdout).email, alice.email)
  const list = await w.cwo(['workflows', 'list', '-o', 'json'], { env })
  t.equal(list.code, 0, list.stderr)
  t.same(JSON.parse(list.stdout).workflows, [])
  t.equal((await w.cwo(['whoami'], { env })).stdout, `${alice.email} (${alice.user.name}, ${alice.user.role}) on ${serverA}\n`)

  // The email asked on stdin too (first line), the password the next line.
  const env2 = fresh()
  const both = await w.cwo(['login', '--server', serverA, '--password-stdin'], { env: env2, stdin: `${alice.email}\n${alice.password}\n` })
  t.equal(both.code, 0, both.stderr)
  t.match(both.stderr, `logged in to ${serverA} as ${alice.email}`)
  // CWO_PASSWORD for scripts.
  const env3 = fresh()
  const fromEnv = await w.cwo(['login', '--server', serverA, '--email', alice.email, '-o', 'json'], { env: { ...env3, CWO_PASSWORD: alice.password } })
  t.equal(fromEnv.code, 0, fromEnv.stderr)
  const answered = JSON.parse(fromEnv.stdout)
  t.same({ server: answered.server, email: answered.user.email }, { server: serverA, email: alice.email }, '-o json: who, for a script')
  t.notOk('token' in answered || fromEnv.stdout.includes(JSON.parse(await readFile(env3.CWO_CONFIG, 'utf8')).servers[serverA].token), 'and no token')
})

t.test('a wrong password is the API\'s 401, exit 1, nothing stored; a password flag is refused', async (t) => {
  const env = fresh()
  const r = await w.cwo(['login', '--server', serverA, '--email', alice.email, '--password-stdin'], { env, stdin: 'not-the-password\n' })
  t.equal(r.code, 1)
  t.equal(r.stderr, 'cwo: 401: invalid email or password\n')
  await t.rejects(stat(env.CWO_CONFIG), { code: 'ENOENT' }, 'nothing stored')

  for (const args of [['--password', alice.password], [`--password=${alice.password}`], ['--password']]) {
    const flag = await w.cwo(['login', '--server', serverA, '--email', alice.email, ...args], { env })
    t.equal(flag.code, 2, `${args[0]}: usage error`)
    t.match(flag.stderr, /--password is refused: .*shell history.*--password-stdin or CWO_PASSWORD/)
  }
  const none = await w.cwo(['login', '--server', serverA, '--email', alice.email], { env })
  t.equal(none.code, 2, 'no password from anywhere (stdin not a terminal)')
  t.match(none.stderr, /no password: use --password-stdin/)
  const empty = await w.cwo(['login', '--server', serverA, '--email', alice.email, '--password-stdin'], { env, stdin: '' })
  t.equal(empty.code, 2)
  t.match(empty.stderr, 'no password on stdin')
  await t.rejects(stat(env.CWO_CONFIG), { code: 'ENOENT' }, 'still nothing stored')
})

t.test('context lists the servers (never tokens), switches to one logged in to, refuses another; logout', async (t) => {
  const env = fresh()
  t.equal((await w.cwo(['login', '-s', serverA, '--email', alice.email, '--password-stdin'], { env, stdin: alice.password })).code, 0)
  t.equal((await w.cwo(['login', '-s', serverB, '--email', bob.email, '--password-stdin'], { env, stdin: bob.password })).code, 0)
  const tokens = Object.values(JSON.parse(await readFile(env.CWO_CONFIG, 'utf8')).servers).map((e) => (e as { token: string }).token)
  t.equal(tokens.length, 2)
  const whoami = async () => JSON.parse((await w.cwo(['whoami', '-o', 'json'], { env })).stdout).email as string
  t.equal(await whoami(), bob.email, 'the last login is current')

  const table = await w.cwo(['context'], { env })
  t.equal(table.code, 0, table.stderr)
  const lines = table.stdout.trimEnd().split('\n')
  t.match(lines[0], /^CURRENT +SERVER +EMAIL +LOGGED IN$/)
  t.match(lines[1], new RegExp(`^ +${serverA} +${alice.email} `))
  t.match(lines[2], new RegExp(`^\\* +${serverB} +${bob.email} `))
  const json = await w.cwo(['context', '-o', 'json'], { env })
  const listed = JSON.parse(json.stdout)
  t.equal(listed.current, serverB)
  t.same(listed.servers.map((s: { server: string; current: boolean }) => [s.server, s.current]), [[serverA, false], [serverB, true]])
  const yaml = await w.cwo(['context', '-o', 'yaml'], { env })
  t.same(YAML.parse(yaml.stdout), listed)
  for (const r of [table, json, yaml]) t.ok(noToken(r, ...tokens), 'no token in any output')

  const sw = await w.cwo(['context', `${serverA}/`], { env })
  t.equal(sw.code, 0, sw.stderr)
  t.equal(sw.stderr, `current server: ${serverA}\n`, 'the URL normalised')
  t.equal(await whoami(), alice.email, 'commands now go to the other server, with its token')

  const unknown = await w.cwo(['context', 'http://127.0.0.1:1'], { env })
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, `cwo: not logged in to http://127.0.0.1:1: run cwo login --server http://127.0.0.1:1 (logged in to: ${serverA}, ${serverB})`)
  t.equal(await whoami(), alice.email, 'a refused switch changes nothing')
  t.equal((await w.cwo(['context', 'not a url'], { env })).code, 2)

  const out = await w.cwo(['logout'], { env })
  t.equal(out.stderr, `logged out of ${serverA}\n`)
  const after = await w.cwo(['whoami'], { env })
  t.equal(after.code, 1)
  t.match(after.stderr, `cwo: not logged in to ${serverA}: run cwo login --server ${serverA}`)
  t.same(Object.keys(JSON.parse(await readFile(env.CWO_CONFIG, 'utf8')).servers), [serverB], 'the other server\'s token kept')
  t.equal((await stat(env.CWO_CONFIG)).mode & 0o777, 0o600, 'rewritten with the same mode')
  t.equal((await w.cwo(['logout', '-s', serverB], { env })).stderr, `logged out of ${serverB}\n`)
  t.equal((await w.cwo(['logout', '-s', serverB], { env })).stderr, `not logged in to ${serverB}\n`, 'twice: says so, exit 0')
  t.equal((await w.cwo(['context', '-o', 'json'], { env })).stdout, JSON.stringify({ current: serverA, servers: [] }, null, 2) + '\n')
  t.match((await w.cwo(['context'], { env })).stderr, 'not logged in to any server: cwo login --server URL')
})

t.test('a config file that is not JSON: one line saying what to do; a server and CWO_TOKEN do without it', async (t) => {
  const env = fresh()
  await mkdir(dirname(env.CWO_CONFIG), { recursive: true })
  await writeFile(env.CWO_CONFIG, '{"current": "http://x", servers: nope')
  const r = await w.cwo(['whoami'], { env })
  t.equal(r.code, 1)
  t.equal(r.stderr, `cwo: ${env.CWO_CONFIG} is not valid JSON: fix or remove it, then log in again\n`)
  const given = await w.cwo(['whoami', '-o', 'json'], { env: { ...env, CWO_SERVER: serverA, CWO_TOKEN: alice.token } })
  t.equal(given.code, 0, given.stderr)
  t.equal(JSON.parse(given.stdout).email, alice.email)
})

t.test('the real binary: login --password-stdin through the process\'s stdin, then whoami from the store', async (t) => {
  const env = fresh()
  const r = await w.cwoProcess(['login', '--server', serverA, '--email', bob.email, '--password-stdin'], { env, stdin: `${bob.password}\n` })
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stderr, `logged in to ${serverA} as ${bob.email}\n`)
  t.equal((await stat(env.CWO_CONFIG)).mode & 0o777, 0o600)
  const me = await w.cwo(['whoami', '-o', 'json'], { env })
  t.equal(JSON.parse(me.stdout).email, bob.email)
})
