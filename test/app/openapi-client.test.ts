// The OpenAPI document as a client author uses it: it lints clean under Redocly's recommended rules, and a
// client generated from it with openapi-typescript + openapi-fetch type-checks a program that calls list
// routes with no query at all, reads typed fields and sends a saved canvas back, and that program works
// against the running service.
import t from 'tap'
import { spawn } from 'node:child_process'
import { copyFile, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'
import openapiTS, { astToString } from 'openapi-typescript'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const { app } = await startTestApp(t)
const yamlText = app.swagger({ yaml: true })
const dir = await mkdtemp(join(tmpdir(), 'openapi-client-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
// The generated files import openapi-fetch: resolve it from the project's own dependencies.
await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
await writeFile(join(dir, 'openapi.yaml'), yamlText)

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

// Redocly runs in its own process: started now, it lints while the client is generated, compiled and run
// (the subtest that reads its report comes last).
// The project's own lint configuration (redocly.yaml, .redocly.lint-ignore.yaml), the same a contributor
// gets from `npx redocly lint openapi.yaml` at the repository root.
for (const file of ['redocly.yaml', '.redocly.lint-ignore.yaml']) await copyFile(join(root, file), join(dir, file))
const linting = run(process.execPath, [join(root, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', 'openapi.yaml', '--config', 'redocly.yaml', '--format', 'json'], dir)

// A program a client author would write. `client` is typed from the generated paths; any call that needs a
// parameter the document marks required, or a field it does not declare, fails to compile.
const PROGRAM = `
import createClient from 'openapi-fetch'
import type { paths, components } from './api.ts'

type User = components['schemas']['User']
type CanvasNode = components['schemas']['CanvasNode']

// Keys in an order no schema lists them in, and keys no schema knows: the canvas must get them back as sent.
export const NODE: CanvasNode = { data: { image: 'nginx:1.27', name: 'web' }, type: 'deployment', id: 'web', extra: 'kept', position: { y: 2, x: 1, zoom: 1 } }

export async function main(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } })

  const profile = await client.GET('/v1/api/profile')
  const me: User | undefined = profile.data
  const role: 'admin' | 'user' | undefined = me?.role

  const created = await client.POST('/v1/api/workflows', { body: { name: 'from a generated client' } })
  if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error))
  const id: string = created.data.id

  const saved = await client.POST('/v1/api/workflows/{id}/save', { params: { path: { id } }, body: { nodes: [NODE], edges: [] } })
  if (!saved.data) throw new Error('save failed: ' + JSON.stringify(saved.error))
  // The reply's nodes are the request's node type: they can be sent back as they are.
  const again = await client.POST('/v1/api/workflows/{id}/save', { params: { path: { id } }, body: { nodes: saved.data.nodes, edges: saved.data.edges } })
  const firstType: string | undefined = again.data?.nodes[0]?.type

  // Clone takes an optional body: no body at all.
  const clone = await client.POST('/v1/api/workflows/{id}/clone', { params: { path: { id } } })

  // List routes with no query parameters.
  const workflows = await client.GET('/v1/api/workflows')
  const total: number | undefined = workflows.data?.total
  const names: string[] = (workflows.data?.workflows ?? []).map((w) => w.name)
  const statuses: Array<'draft' | 'published' | 'archived'> = (workflows.data?.workflows ?? []).map((w) => w.status)
  const versions = await client.GET('/v1/api/workflows/{id}/versions', { params: { path: { id } } })
  const runs = await client.GET('/v1/api/workflows/{id}/runs', { params: { path: { id } } })
  const clusters = await client.GET('/v1/api/clusters')
  const registries = await client.GET('/v1/api/registries')
  const recent = await client.GET('/v1/api/dashboard/recent-workflows')
  const templates = await client.GET('/v1/api/templates')
  const paged = await client.GET('/v1/api/workflows', { params: { query: { limit: 1, order: 'asc', sort: 'name' } } })

  return {
    role, total, names, statuses, firstType,
    node: saved.data.nodes[0],
    cloneStatus: clone.response.status,
    versionTotal: versions.data?.total, runTotal: runs.data?.total, clusterTotal: clusters.data?.total,
    registryTotal: registries.data?.total, recent: recent.data?.workflows.length,
    templateNames: (templates.data?.templates ?? []).map((tpl) => tpl.name),
    paged: { limit: paged.data?.limit, count: paged.data?.workflows.length },
    errors: [workflows, versions, runs, clusters, registries, recent, templates, paged].map((r) => r.error).filter(Boolean),
  }
}
`

// The same calls written wrongly: each line must be a compile error, or the check above proves nothing.
const WRONG_PROGRAM = `
import createClient from 'openapi-fetch'
import type { paths } from './api.ts'

export async function wrong(client: ReturnType<typeof createClient<paths>>) {
  await client.GET('/v1/api/workflows', { params: { query: { page: 'first' } } })
  await client.GET('/v1/api/workflows', { params: { query: { order: 'sideways' } } })
  const list = await client.GET('/v1/api/workflows')
  const nope: number | undefined = list.data?.workflows[0]?.no_such_field
  await client.GET('/v1/api/workflows/{id}/versions')
  return nope
}
`

t.test('a client generated with openapi-typescript compiles a program calling list routes without parameters', async (t) => {
  const ast = await openapiTS(yamlText)
  await writeFile(join(dir, 'api.ts'), astToString(ast))
  await writeFile(join(dir, 'program.ts'), PROGRAM)
  await writeFile(join(dir, 'wrong.ts'), WRONG_PROGRAM)

  const program = ts.createProgram([join(dir, 'program.ts'), join(dir, 'wrong.ts')], {
    target: ts.ScriptTarget.ES2023, lib: ['lib.es2023.d.ts'], module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true, noEmit: true, skipLibCheck: true, allowImportingTsExtensions: true, types: ['node'], typeRoots: [join(root, 'node_modules/@types')],
  })
  const diagnostics = ts.getPreEmitDiagnostics(program)
  const describe = (d: ts.Diagnostic) => `${d.file ? d.file.fileName.replace(dir, '') : ''}:${d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : ''} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
  const inFile = (name: string) => diagnostics.filter((d) => d.file?.fileName.endsWith(name)).map(describe)
  const elsewhere = diagnostics.filter((d) => !d.file || !/(program|wrong)\.ts$/.test(d.file.fileName)).map(describe)

  t.same(elsewhere, [], 'the generated client itself compiles')
  t.same(inFile('/program.ts'), [], 'the program compiles')
  const wrongLines = new Set(diagnostics.filter((d) => d.file?.fileName.endsWith('/wrong.ts') && d.start !== undefined).map((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1))
  t.same([...wrongLines].sort((a, b) => a - b), [6, 7, 9, 10], `every wrong call is refused:\n${inFile('/wrong.ts').join('\n')}`)
})

t.test('the compiled program works against the running service', async (t) => {
  const user = await registerUser(app)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const { main, NODE } = await import(pathToFileURL(join(dir, 'program.ts')).href) as { main: (baseUrl: string, token: string) => Promise<Record<string, unknown>>; NODE: object }
  const result = await main(address, user.token)
  t.same(result.errors, [], 'every list call succeeded without parameters')
  t.equal(result.role, 'admin')
  t.equal(result.total, 2, 'the workflow and its clone')
  t.equal(result.cloneStatus, 201)
  t.equal(result.firstType, 'deployment')
  t.equal(JSON.stringify(result.node), JSON.stringify(NODE), 'the node came back as sent, key order included')
  t.same(result.paged, { limit: 1, count: 1 })
  t.ok((result.templateNames as string[]).includes('deployment'))
})

t.test('the document lints clean with @redocly/cli (recommended rules): 0 errors, 0 warnings', async (t) => {
  const result = await linting
  const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> }
  const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`)
  t.same(problems, [], 'no problems')
  t.equal(report.totals.errors, 0, 'errors')
  t.equal(report.totals.warnings, 0, 'warnings')
  t.equal(report.totals.ignored, 4, 'only the two probe findings, the terminal\'s 101 and the channels/{id} vs {id}/read overlap (redocly.yaml) are ignored')
  t.equal(result.code, 0, 'exit code')
})
