// The docs test's own parts: which blocks run, the norun rule, links and anchors, and the runner itself
// (the environment a document gets, a failure named by document and line, a timeout, background jobs).
import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { anchors, fencedBlocks, kindOf, links, norunProblems, slug } from './markdown.ts'
import { documents, guidesNotLinkedFromReadme, linkProblems, share } from './documents.ts'
import { runDocument } from './run-document.ts'

const dir = await mkdtemp(join(tmpdir(), 'cwo-docs-test-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

t.test('shell blocks run, norun and other languages do not', async (t) => {
  const md = [
    '# T', '```sh', 'echo 1', '```', '```bash', 'echo 2', '```', '```shell title', 'echo 3', '```',
    '```sh norun', '# not run by the docs test: needs a real cluster', 'kubectl get nodes', '```',
    '```ts', 'const x = 1', '```', '```', 'plain', '```', '~~~json', '{}', '~~~',
    '- a list item', '  ```sh', '  echo indented', '  ```',
    '````sh', '```', 'echo inner fence', '````',
  ].join('\n')
  const blocks = fencedBlocks(md)
  t.same(blocks.map((b) => [b.line, kindOf(b)]), [
    [2, 'run'], [5, 'run'], [8, 'run'], [11, 'norun'], [15, 'illustration'], [18, 'illustration'], [21, 'illustration'], [25, 'run'], [28, 'run'],
  ])
  t.same(blocks[7].body, ['echo indented'])
  t.same(blocks[8].body, ['```', 'echo inner fence'])
  t.same(norunProblems('x.md', blocks), [])
})

t.test('a norun block without its reason line is a problem', async (t) => {
  const blocks = fencedBlocks(['```sh norun', 'kubectl get nodes', '```', '```bash norun', '# not run by the docs test:', '```'].join('\n'))
  const problems = norunProblems('x.md', blocks)
  t.equal(problems.length, 2)
  t.match(problems[0], /^x\.md:1: a norun block must start with "# not run by the docs test: <reason>"/)
  t.match(problems[1], /^x\.md:4: /)
})

t.test('links: inline, images, references; not in code', async (t) => {
  const md = ['See [a](docs/a.md#x) and ![i](img.png "t") and `[no](code.md)`.', '[ref]: <other.md>', '```sh', 'echo [no](block.md)', '```', '<https://example.com>']
  t.same(links(md.join('\n')), [{ line: 1, target: 'docs/a.md#x' }, { line: 1, target: 'img.png' }, { line: 2, target: 'other.md' }])
})

t.test('anchors follow GitHub\'s slugs', async (t) => {
  t.equal(slug('Rollback and sync'), 'rollback-and-sync')
  t.equal(slug('`cwo run --wait`: exit codes'), 'cwo-run---wait-exit-codes')
  t.equal(slug('The [CLI](docs/cli.md) & *you*'), 'the-cli--you')
  t.equal(slug('`RUN_READY_TIMEOUT_MS` and _emphasis_'), 'run_ready_timeout_ms-and-emphasis')
  t.same([...anchors('# A\n## A\n```sh\n# A\n```\n<a id="custom"></a>\n### B ##')], ['a', 'a-1', 'custom', 'b'])
})

t.test('relative links must reach a file and, for Markdown, a heading', async (t) => {
  await writeFile(join(dir, 'b.md'), '# Here\n')
  await writeFile(join(dir, 'a.md'), [
    '[ok](b.md#here) [ok](b.md) [self](#top) [ext](https://example.com/x.md) [mail](mailto:a@b.c)',
    '# Top',
    '[gone](missing.md) [anchor](b.md#nowhere) [out](../../etc/passwd)',
  ].join('\n'))
  const problems = linkProblems('a.md', dir)
  t.equal(problems.length, 3, problems.join('\n'))
  t.match(problems[0], /^a\.md:3: missing\.md: missing\.md does not exist$/)
  t.match(problems[1], /^a\.md:3: b\.md#nowhere: b\.md has no heading with the anchor #nowhere$/)
  t.match(problems[2], /leaves the repository/)
})

t.test('the two test files share the documents: each once', async (t) => {
  t.same([...share(0), ...share(1)].sort(), [...documents()].sort())
  t.ok(share(0).includes('docs/cli.md') !== share(1).includes('docs/cli.md'))
})

t.test('a guide the README does not link to is named', async (t) => {
  const guides = documents().filter((d) => d !== 'README.md')
  t.ok(guides.length > 0)
  t.same(guidesNotLinkedFromReadme(guides.slice(1).map((g) => `[x](${g}#anchor)`).join('\n')), [guides[0]])
})

t.test('a document gets its own service, simulator, HOME, working directory and cwo', async (t) => {
  const path = join(dir, 'env.md')
  await writeFile(path, [
    '# Env', '```sh',
    'test "$HOME" != "$PWD" && test -z "$(ls -A .)" && test -z "$(ls -A "$HOME")"',
    'test -z "${CWO_TOKEN:-}"',
    'grep -q "^kind: Config" "$KUBECONFIG_SIM"',
    'curl -sf http://localhost:3000/healthz > health.json',
    '```', '```sh norun', '# not run by the docs test: proves norun', 'exit 7', '```',
    '```bash',
    'cwo --help | grep -q Usage',
    'curl -fsS http://localhost:3000/v1/api/auth/register -H "content-type: application/json" -d \'{"email":"ada@example.com","password":"correct horse","name":"Ada"}\' > /dev/null',
    'echo "correct horse" | cwo login --email ada@example.com --password-stdin   # cwo\'s default server is the service',
    'cwo whoami -o json | grep -q ada@example.com',
    'echo the end',
    'sleep 300 &   # a background job the document leaves behind is ended with it',
    'head -n 1 <(timeout 300 sh -c "echo from-timeout; sleep 300")   # GNU timeout in a process group of its own too',
    '```',
  ].join('\n'))
  const started = Date.now()
  const run = await runDocument(t, path, { name: 'env.md' })
  t.ok(run.ok, run.report)
  t.equal(run.blocks, 2)
  t.match(run.stdout, /the end\nfrom-timeout/)
  t.ok(Date.now() - started < 20_000, 'the background job did not hold the run')
})

t.test('a failure names the document, the block, the line and the command\'s stderr', async (t) => {
  const path = join(dir, 'fail.md')
  await writeFile(path, [
    '# Fail', '```sh', 'echo first', '```', 'Prose.', '```sh', 'echo second',
    'ls /nonexistent-docs-test-path | wc -l', 'echo not reached', '```', '```sh', 'echo third', '```',
  ].join('\n'))
  const run = await runDocument(t, path, { name: 'fail.md' })
  t.notOk(run.ok)
  t.equal(run.failedBlock, 6)
  t.equal(run.failedLine, 8)
  t.match(run.report, /^fail\.md:8 \(block at line 6\): exit code [1-9]/)
  t.match(run.report, /command: ls \/nonexistent-docs-test-path \| wc -l/)
  t.match(run.report, /No such file or directory/)
  t.notMatch(run.stdout, /not reached|third/)
})

t.test('a document that does not end is killed at its timeout', async (t) => {
  const path = join(dir, 'hang.md')
  await writeFile(path, ['```sh', 'echo started', 'sleep 300', '```'].join('\n'))
  const run = await runDocument(t, path, { name: 'hang.md', timeoutMs: 1000 })
  t.notOk(run.ok)
  t.ok(run.timedOut)
  t.match(run.report, /^hang\.md, block at line 1: still running after 1000 ms, killed/)
})
