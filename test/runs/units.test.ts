// The run service's small parts, without a cluster: redaction of run-time values in every form a cluster
// may echo them, the per-cluster concurrency bound, the bounded log, and the missing-operator message.
import t from 'tap'
import { redactor, redactDeep, triggerValues } from '../../src/services/run-redaction.ts'
import { limiter, ClusterLimiters } from '../../src/services/run-limiter.ts'
import { RunLog } from '../../src/services/run-log.ts'
import { missingApiMessage } from '../../src/services/run-service.ts'

// Promise.withResolvers needs Node 22; Node 20 is supported.
function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => { resolve = r })
  return { promise, resolve }
}

t.test('redaction masks values as sent, base64 (with and without padding) and JSON-escaped', async (t) => {
  const redact = redactor(['hunter2-long', 'quote"d\\value', 'ab'])
  t.equal(redact('password is hunter2-long.'), 'password is [redacted].')
  t.equal(redact(`data: ${Buffer.from('hunter2-long').toString('base64')}`), 'data: [redacted]')
  t.equal(redact(`x${Buffer.from('hunter2-long').toString('base64').replace(/=+$/, '')}y`), 'x[redacted]y')
  t.equal(redact('{"v":"quote\\"d\\\\value"}'), '{"v":"[redacted]"}')
  t.equal(redact('ab cab ab.'), '[redacted] cab [redacted].', 'short values only as whole words')
  t.equal(redactor([])('untouched'), 'untouched')
  t.equal(redactor(['a-longer-secret', 'a-longer-secret-still'])('a-longer-secret-still'), '[redacted]', 'the longest value is masked whole')
})

t.test('redaction takes the largest values a run request allows (the fuzzer once hung a run with them)', async (t) => {
  // Eight 64 KiB values and their encodings: ~2 MB of alternatives, more than V8 compiles into one regex.
  const values = Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(97 + i)}${'x'.repeat(65_535)}`)
  const started = performance.now()
  const redact = redactor([...values, 'ab'])
  const log = `deploying ${values[3]} then ${Buffer.from(values[5]).toString('base64')} and ab, ${'plain text '.repeat(2000)}`
  const out = redact(log)
  const ms = performance.now() - started
  t.equal(out, `deploying [redacted] then [redacted] and [redacted], ${'plain text '.repeat(2000)}`)
  t.ok(ms < 2000, `built and applied in ${ms.toFixed(0)} ms`)
})

t.test('triggerValues collects every value of secrets and envVars; redactDeep reaches nested strings and keys', async (t) => {
  const values = triggerValues({ n1: { A: 'one-value', B: 'two-value' } }, { n2: { C: 'three-value' } }, undefined)
  t.same(values.sort(), ['one-value', 'three-value', 'two-value'])
  const redact = redactor(values)
  t.same(redactDeep({ changed: [{ path: 'spec.env[name=C].value', old: 'x', new: 'three-value' }], n: 3, k: { 'one-value': ['two-value'] } }, redact),
    { changed: [{ path: 'spec.env[name=C].value', old: 'x', new: '[redacted]' }], n: 3, k: { '[redacted]': ['[redacted]'] } })
})

t.test('the limiter never runs more than its bound at once, and hands slots over in order', async (t) => {
  const run = limiter(2)
  let active = 0
  let peak = 0
  const order: number[] = []
  const gates = Array.from({ length: 6 }, () => deferred())
  const tasks = gates.map((g, i) => run(async () => {
    active++; peak = Math.max(peak, active); order.push(i)
    await g.promise
    active--
    return i
  }))
  await new Promise((r) => setImmediate(r))
  t.equal(active, 2)
  for (const g of gates) { g.resolve(); await new Promise((r) => setImmediate(r)) }
  t.same(await Promise.all(tasks), [0, 1, 2, 3, 4, 5])
  t.equal(peak, 2)
  t.same(order, [0, 1, 2, 3, 4, 5])
  const failing = run(async () => { throw new Error('boom') })
  await t.rejects(failing, /boom/)
  t.equal(await run(async () => 'slot released after a failure'), 'slot released after a failure')
})

t.test('cluster limiters: one bound per cluster, shared by every run to it', async (t) => {
  const limiters = new ClusterLimiters(1)
  const gate = deferred()
  let second = false
  const a = limiters.for('c1')(() => gate.promise)
  const b = limiters.for('c1')(async () => { second = true })
  const other = limiters.for('c2')(async () => 'another cluster is not held up')
  t.equal(await other, 'another cluster is not held up')
  t.notOk(second, 'the second task on c1 waits')
  gate.resolve()
  await Promise.all([a, b])
  t.ok(second)
})

t.test('the run log is redacted, one line per entry, bounded in length and count', async (t) => {
  const log = new RunLog(redactor(['topsecret']), 10, 50)
  log.add('line with topsecret\nand a second line')
  t.match(log.lines()[0], /line with \[redacted\] and a second line$/)
  log.add('x'.repeat(200))
  t.ok(log.lines()[1].length < 80)
  for (let i = 0; i < 100; i++) log.add(`entry ${i}`)
  const lines = log.lines()
  t.equal(lines.length, 10)
  t.match(lines[5], /lines left out/)
  t.match(lines.at(-1), /entry 99$/)
})

t.test('a missing CRD names the operator from the plugin\'s own description', async (t) => {
  const object = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'x' } }
  const plugin = { id: 'p', name: 'cert-manager-certificate', display_name: 'cert-manager Certificate', description: 'A TLS certificate. Requires cert-manager 1.x and an Issuer; more text.', enabled: true, crd: { group: 'cert-manager.io', version: 'v1', kind: 'Certificate', plural: 'certificates' }, config_fields: [], template: '' }
  t.equal(missingApiMessage(object, plugin), 'Certificate (cert-manager.io/v1) is not served by this cluster: install cert-manager 1.x and an Issuer (plugin "cert-manager Certificate"), then run again')
  t.match(missingApiMessage(object, { ...plugin, description: 'No hint here.' }), /install the operator behind the "cert-manager Certificate" plugin/)
  t.match(missingApiMessage(object, undefined), /install the operator or CRD/)
})
