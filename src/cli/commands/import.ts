// cwo import compose FILE | git URL: analyze, follow the import to its end, then (unless --analyze-only)
// put the graph into a new draft workflow, or into an existing one with --into.
import { readFile } from 'node:fs/promises'
import { basename, dirname, extname, resolve } from 'node:path'
import type { Command } from 'commander'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import { table } from '../output.ts'
import type { Session } from '../session.ts'
import { followStream } from '../sse.ts'
import { resolveWorkflowId } from '../workflow-ref.ts'
import type { components, paths } from '../api/openapi.ts'
import type { ImportLog, ImportProgress } from '../follow/events.ts'

type AnalyzeBody = paths['/v1/api/import/analyze']['post']['requestBody']['content']['application/json']
type ImportSession = components['schemas']['ImportSession']
type Workflow = components['schemas']['Workflow']

interface CommonOptions {
  name?: string; description?: string; cluster?: string; into?: string; replace?: boolean; analyzeOnly?: boolean
  profiles?: string; envFile?: string; env: string[]; ingress?: string | boolean
}
interface GitOptions extends CommonOptions { branch?: string; path?: string; tokenEnv?: string; username?: string }

const collect = (v: string, prev: string[]) => [...prev, v]

function common(cmd: Command): Command {
  return cmd
    .option('--name <name>', 'name of the new workflow (default: from the file\'s folder or the repository)')
    .option('--description <text>', 'description of the new workflow')
    .option('--cluster <cluster>', 'cluster of the new workflow (name or id)')
    .option('--into <workflow>', 'put the graph into this existing workflow (id or name) beside its nodes, instead of a new one')
    .option('--replace', 'with --into: the imported graph replaces the workflow\'s')
    .option('--analyze-only', 'only analyze: print the summary, create or change no workflow')
    .option('--profiles <list>', 'active compose profiles, comma-separated (default: only services without profiles)')
    .option('--env-file <file>', 'a .env file for ${VAR} interpolation')
    .option('--env <KEY=VALUE>', 'a variable for interpolation (repeatable; wins over --env-file)', collect, [])
    .option('--ingress [host]', 'also an Ingress per service with published ports (with host: <service>.<host>)')
    .addHelpText('after', `
By default the analysis becomes a new draft workflow (nothing is deployed: cwo run WORKFLOW does that);
--into WORKFLOW merges it into an existing one (--replace swaps its graph), --analyze-only creates nothing.
Progress goes to stderr; stdout gets the services, then the workflow's name and id (-o json: the import
session with its analysis and the workflow, as one object). Exit 0 when the import completed, 3 when the
analysis failed, 1 when the API refused.`)
}

async function analysisOptions(ctx: CommandContext, o: CommonOptions): Promise<Partial<AnalyzeBody>> {
  const env: Record<string, string> = {}
  for (const pair of o.env) {
    const eq = pair.indexOf('=')
    if (eq < 1) throw new CliError(`--env takes KEY=VALUE, not ${JSON.stringify(pair)}`, EXIT.usage)
    env[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
  if (o.replace && !o.into) throw new CliError('--replace goes with --into WORKFLOW', EXIT.usage)
  return {
    ...(o.envFile && { env_file: await readText(ctx, o.envFile) }),
    ...(o.env.length && { env }),
    ...(o.profiles && { profiles: o.profiles.split(',').map((p) => p.trim()).filter(Boolean) }),
    ...(o.ingress !== undefined && { ingress: typeof o.ingress === 'string' ? { host: o.ingress } : true }),
  }
}

async function readText(ctx: CommandContext, file: string): Promise<string> {
  try { return await readFile(resolve(ctx.io.cwd, file), 'utf8') } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`, EXIT.usage)
  }
}

/** Follows the session to its end, progress on stderr; answers it whole, or throws exit 3 when it failed. */
async function follow(ctx: CommandContext, s: Session, id: string): Promise<ImportSession> {
  let outcome: 'complete' | 'failed' | undefined
  for await (const e of followStream(s, `/v1/api/import/${encodeURIComponent(id)}/stream`, { signal: ctx.io.signal })) {
    if (e.type === 'progress') {
      const p = e.data as ImportProgress
      ctx.note(`-- ${p.status} ${p.progress}%${p.message ? ` ${p.message}` : ''}`)
    } else if (e.type === 'log') ctx.note((e.data as ImportLog).line)
    else if (e.type === 'complete' || e.type === 'failed') { outcome = e.type; break }
  }
  if (!outcome) throw new CliError(`the stream of import ${id} ended before the import did`)
  const session = await ok(s.server, s.client.GET('/v1/api/import/{id}', { params: { path: { id } } }))
  if (session.status === 'failed') {
    if (ctx.format !== 'table') ctx.print({ import: session, workflow: null })
    throw new CliError(`import failed: ${session.error ?? 'no reason given'}`, EXIT.failed)
  }
  return session
}

async function finish(ctx: CommandContext, s: Session, started: ImportSession, o: CommonOptions, defaultName: string): Promise<void> {
  ctx.note(`import ${started.id} started`)
  const [session, into] = await Promise.all([follow(ctx, s, started.id), o.into ? resolveWorkflowId(s, o.into) : undefined])
  const analysis = session.analysis!
  for (const w of analysis.warnings) ctx.note(`warning: ${[w.service, w.key].filter(Boolean).join(' ')}${w.service || w.key ? ': ' : ''}${w.message}`)
  for (const e of analysis.errors) ctx.note(`error: ${[e.service, e.key].filter(Boolean).join(' ')}${e.service || e.key ? ': ' : ''}${e.message}`)
  let workflow: Workflow | null = null
  if (into) {
    workflow = await ok(s.server, s.client.POST('/v1/api/import/apply', { body: { import_id: session.id, workflow_id: into, mode: o.replace ? 'replace' : 'merge' } }))
  } else if (!o.analyzeOnly) {
    workflow = await ok(s.server, s.client.POST('/v1/api/import/create-workflow', {
      body: { import_id: session.id, name: o.name ?? defaultName, description: o.description, cluster_id: o.cluster },
    }))
  }
  ctx.print({ import: session, workflow }, () => {
    const services = table(analysis.services, [
      { header: 'service', value: (v) => v.name },
      { header: 'kind', value: (v) => v.kind },
      { header: 'image', value: (v) => v.image ?? (v.needs_build ? '(needs a build)' : '') },
      { header: 'replicas', value: (v) => v.replicas },
      { header: 'nodes', value: (v) => v.node_ids.length },
    ])
    const verb = into ? (o.replace ? 'replaced the graph of' : 'merged into') : 'created'
    return services + (workflow ? `\nworkflow ${JSON.stringify(workflow.name)} ${verb}: ${workflow.id}\n` : '')
  })
}

/** compose.yaml in ./shop → "shop"; web.compose.yml → "web.compose". */
function nameFromFile(file: string, cwd: string): string {
  const base = basename(file, extname(file))
  if (!/^(docker-)?compose$/.test(base)) return base
  return basename(dirname(resolve(cwd, file))) || base
}

/** https://host/org/shop.git → "shop". */
function nameFromUrl(url: string): string {
  try { return basename(new URL(url).pathname.replace(/\/+$/, '')).replace(/\.git$/, '') || 'import' } catch { return 'import' }
}

export function registerImport(program: Command, ctx: CommandContext): void {
  const imp = program.command('import').description('turn a compose file or a Git repository into a workflow')

  common(imp.command('compose')
    .description('analyze a compose file and make it a workflow')
    .argument('<file>', 'the compose file (YAML)'))
    .action(async (file: string, o: CommonOptions) => {
      const content = await readText(ctx, file)
      const body: AnalyzeBody = { source: 'compose', content, ...await analysisOptions(ctx, o) }
      const s = await ctx.session()
      const started = await ok(s.server, s.client.POST('/v1/api/import/analyze', { body }))
      await finish(ctx, s, started, o, nameFromFile(file, ctx.io.cwd))
    })

  common(imp.command('git')
    .description('fetch a Git repository, analyze its compose file (or Dockerfile) and make it a workflow')
    .argument('<url>', 'the repository (https)')
    .option('--branch <branch>', 'branch (default: the repository\'s default branch)')
    .option('--path <dir>', 'folder inside the repository holding the compose file')
    .option('--token-env <VAR>', 'read a token for a private repository from this environment variable (used for this fetch only)')
    .option('--username <name>', 'user name sent with the token (default x-access-token)'))
    .action(async (url: string, o: GitOptions) => {
      const token = o.tokenEnv ? ctx.io.env[o.tokenEnv] : undefined
      if (o.tokenEnv && !token) throw new CliError(`--token-env: ${o.tokenEnv} is not set`, EXIT.usage)
      const body: AnalyzeBody = { source: 'git', url, branch: o.branch, path: o.path, token, username: o.username, ...await analysisOptions(ctx, o) }
      const s = await ctx.session()
      const started = await ok(s.server, s.client.POST('/v1/api/import/analyze', { body }))
      await finish(ctx, s, started, o, nameFromUrl(url))
    })
}
