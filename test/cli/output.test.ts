// --output: JSON and YAML print the value whole; a table is aligned columns with capital headers, one line per
// row whatever the cells hold; a format cwo does not have is a usage error, before any request.
import { PassThrough } from 'node:stream'
import t from 'tap'
import YAML from 'yaml'
import { CliError } from '../../src/cli/errors.ts'
import { parseFormat, render, table } from '../../src/cli/output.ts'
import { runCli } from '../../src/cli/program.ts'

t.test('table: aligned, capital headers, no trailing blanks, one line per row', async (t) => {
  const rows = [
    { id: 'a1', name: 'web', n: 3, extra: null },
    { id: 'b22222', name: 'line\nbreak\ttab', n: 10, extra: { k: 'v' } },
  ]
  const text = table(rows, [
    { header: 'id', value: (r) => r.id },
    { header: 'name', value: (r) => r.name },
    { header: 'nodes', value: (r) => r.n },
    { header: 'extra', value: (r) => r.extra },
  ])
  t.equal(text, [
    'ID      NAME            NODES  EXTRA',
    'a1      web             3',
    'b22222  line break tab  10     {"k":"v"}',
    '',
  ].join('\n'))
  t.equal(table([], [{ header: 'last run', value: () => 1 }]), 'LAST RUN\n', 'no rows: the header')
})

t.test('render: json and yaml whole, table by its renderer, yaml when there is none', async (t) => {
  const value = { id: 'x', nested: { list: [1, 'two', null] }, when: '2026-01-01T00:00:00.000Z' }
  t.equal(render(value, 'json'), JSON.stringify(value, null, 2) + '\n')
  t.same(YAML.parse(render(value, 'yaml')), value)
  t.equal(render(value, 'table', () => 'TABLE\n'), 'TABLE\n')
  t.equal(render(value, 'yaml', () => 'TABLE\n'), render(value, 'yaml'), 'yaml ignores the table form')
  t.equal(render(value, 'table'), render(value, 'yaml'), 'no table form: yaml')
})

t.test('a format cwo does not have is a usage error (exit 2), before any request', async (t) => {
  t.equal(parseFormat('json'), 'json')
  t.throws(() => parseFormat('xml'), new CliError('--output must be one of table, json, yaml, not "xml"', 2))
  let stderr = ''
  const code = await runCli(['workflows', 'list', '-o', 'xml'], {
    stdout: { write: () => true }, stderr: { write: (s: string) => { stderr += s; return true } }, stdin: new PassThrough(),
    // A server nothing listens on: a request would fail with exit 1, not 2.
    env: { CWO_SERVER: 'http://127.0.0.1:1', CWO_TOKEN: 'x' }, cwd: process.cwd(), signal: new AbortController().signal, isTTY: false,
  })
  t.equal(code, 2)
  t.match(stderr, /argument 'xml' is invalid.*Allowed choices are table, json, yaml/)
})
