// Errors reach the log with their type, message and code, never as `[object Object]` (what the log said when
// the built server could not load its apply engine), with credentials and a run's secret values scrubbed;
// the reply says what went wrong in words, without a stack or the error's own text.
import t from 'tap'
import { Writable } from 'node:stream'
import pino from 'pino'
import { errorForLog, loggerOptions, serializeError } from '../../src/logger.ts'
import { runFixture, TRIGGER, SECRET_VALUE } from '../runs/fixture.ts'

function capture() {
  const lines: Array<Record<string, any>> = []
  const log = pino(loggerOptions({ LOG_LEVEL: 'info' }), new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } }))
  return { log, lines }
}

t.test('the err serializer: Errors, plain { message, code } objects, other objects and primitives', async (t) => {
  const notFound = Object.assign(new Error("Cannot find module '/app/dist/src/kube/deploy.ts'"), { code: 'ERR_MODULE_NOT_FOUND' })
  t.match(serializeError(notFound), { type: 'Error', message: /Cannot find module/, code: 'ERR_MODULE_NOT_FOUND', stack: /deploy\.ts/ })
  t.same(serializeError({ message: 'already redacted', code: 'E42' }), { message: 'already redacted', code: 'E42' })
  const odd = serializeError({ status: 500, token: 'tok-value-1234' })
  t.equal(odd.message, 'a value that is not an Error (Object with keys status, token)')
  t.notMatch(JSON.stringify(odd), /tok-value-1234/, 'key names only: the values of an unknown object are not logged')
  t.same(serializeError('a string'), { message: 'a string' })
  t.same(serializeError(undefined), { message: 'undefined' })
  const fetchFailed = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) })
  t.match(serializeError(fetchFailed), { type: 'TypeError', message: 'fetch failed', cause: { message: /ECONNREFUSED/, code: 'ECONNREFUSED' } })
  t.match(serializeError(new Error('GET https://admin:hunter2@registry.example/v2 failed')).message, 'https://[REDACTED]@registry.example')
})

t.test('through pino: the err of a line is what the serializer made of it', async (t) => {
  const { log, lines } = capture()
  log.error({ err: { message: 'plain object' } }, 'a')
  log.error({ err: Object.assign(new Error('boom'), { code: 'EBOOM' }) }, 'b')
  log.error({ err: errorForLog(Object.assign(new Error(`failed with ${SECRET_VALUE}`), { code: 403 }), (s) => s.replaceAll(SECRET_VALUE, '[redacted]')) }, 'c')
  t.match(lines[0], { msg: 'a', err: { message: 'plain object' } })
  t.match(lines[1], { msg: 'b', err: { type: 'Error', message: 'boom', code: 'EBOOM', stack: /Error: boom/ } })
  t.match(lines[2], { msg: 'c', err: { type: 'Error', message: 'failed with [redacted]', code: 403 } })
  t.notOk('stack' in lines[2]!.err, 'errorForLog leaves the stack out: the caller\'s redaction would not reach it')
  t.notMatch(JSON.stringify(lines), /\[object Object\]/)
  // `code` is also a secret key (an OAuth code): outside an error, or not shaped like an error code, it is censored.
  log.info({ body: { code: 'oauth-Code_4f9a' }, query: { code: 'E3B0C44298FC1C149AFBF4C8' }, err: { message: 'x', code: 'mixed-Case-code' } }, 'd')
  t.match(lines[3], { body: { code: '[REDACTED]' }, query: { code: '[REDACTED]' }, err: { code: '[REDACTED]' } })
})

t.test('a run stopped by an unexpected error: the reply says so in words, the log has its message and code', async (t) => {
  const f = await runFixture(t)
  const id = await f.workflow({ nodes: [{ id: 'n-cm', type: 'configmap', position: { x: 0, y: 0 }, data: { name: 'cm', namespace: 'default', data: { A: '1' } } }], edges: [] })
  // The apply engine failing as the built server's did when its module could not be loaded, with a run-time
  // secret value in the text; then failing with a value that is not an Error at all.
  const engine = (f.app.services.runs as unknown as { deps: { engine: { deploy: (...args: unknown[]) => Promise<unknown> } } }).deps.engine
  const original = engine.deploy
  t.teardown(() => { engine.deploy = original })
  engine.deploy = async () => { throw Object.assign(new Error(`Cannot find module '/app/dist/src/kube/deploy.ts' (${SECRET_VALUE})`), { code: 'ERR_MODULE_NOT_FOUND' }) }
  const first = await f.call(f.owner, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })
  t.equal(first.status, 200)
  t.match(first.body, { status: 'failed', error: /^the run stopped: / })
  t.notMatch(JSON.stringify(first.body), /deploy\.ts|ERR_MODULE_NOT_FOUND|at .*\.ts:\d+/, 'no error text or stack in the reply')

  engine.deploy = async () => { throw { status: 'weird' } }
  const second = await f.call(f.owner, 'POST', `/v1/api/workflows/${id}/run`, {})
  t.match(second.body, { status: 'failed', error: /^the run stopped: / })

  const failures = f.logs.flatMap((chunk) => chunk.split('\n')).filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.msg === 'run failed unexpectedly')
  t.equal(failures.length, 2)
  t.match(failures[0], { run_id: first.body.id, err: { type: 'Error', code: 'ERR_MODULE_NOT_FOUND', message: /Cannot find module .*deploy\.ts.*\[redacted\]/ } })
  t.match(failures[1], { run_id: second.body.id, err: { message: 'a value that is not an Error (Object with keys status)' } })
  const everything = await f.everythingStored()
  t.notMatch(everything, /\[object Object\]/, 'no log line says [object Object]')
  t.notMatch(everything, SECRET_VALUE, 'the run-time secret reached neither the log nor the database')
})
