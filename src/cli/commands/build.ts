// cwo build start REPO --registry R --image NAME[:TAG] [--follow] | list | get BUILD | logs BUILD | cancel BUILD
import type { Command } from 'commander'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import { table } from '../output.ts'
import type { Session } from '../session.ts'
import { followStream } from '../sse.ts'
import { resolveWorkflowId } from '../workflow-ref.ts'
import type { components } from '../api/openapi.ts'
import type { BuildComplete, BuildFailed, BuildLog, BuildProgress } from '../follow/events.ts'

type Build = components['schemas']['Build']

interface StartOptions {
  registry: string; image: string; cluster?: string; namespace?: string; branch?: string; commit?: string
  context?: string; dockerfile?: string; buildArg: string[]; workflow?: string; node?: string; follow?: boolean
}

const collect = (v: string, prev: string[]) => [...prev, v]

/** `--registry`: a registry's id, or its name (exact). */
async function resolveRegistryId(s: Session, ref: string): Promise<string> {
  const page = await ok(s.server, s.client.GET('/v1/api/registries', { params: { query: { search: ref, limit: 100 } } }))
  const byId = page.registries.find((r) => r.id === ref)
  if (byId) return byId.id
  const named = page.registries.filter((r) => r.name === ref)
  if (named.length === 1) return named[0].id
  if (named.length > 1) throw new CliError(`${named.length} registries are named ${JSON.stringify(ref)}: use the id (${named.map((r) => r.id).join(', ')})`)
  throw new CliError(`404: no registry named ${JSON.stringify(ref)}`)
}

/** The cluster a build runs in when --cluster is not given: the caller's default one. */
async function defaultCluster(s: Session): Promise<string> {
  const page = await ok(s.server, s.client.GET('/v1/api/clusters', { params: { query: { limit: 100 } } }))
  const chosen = page.clusters.find((c) => c.is_default)
  if (!chosen) throw new CliError('no default cluster: name one with --cluster', EXIT.usage)
  return chosen.name
}

function splitImage(image: string): { image_name: string; image_tag?: string } {
  const colon = image.lastIndexOf(':')
  return colon > image.lastIndexOf('/') ? { image_name: image.slice(0, colon), image_tag: image.slice(colon + 1) } : { image_name: image }
}

const buildColumns = [
  { header: 'id', value: (b: Build) => b.id },
  { header: 'status', value: (b: Build) => b.status },
  { header: 'progress', value: (b: Build) => `${b.progress}%` },
  { header: 'image', value: (b: Build) => b.image_ref ?? `${b.image_name}:${b.image_tag}` },
  { header: 'cluster', value: (b: Build) => `${b.cluster}/${b.namespace}` },
  { header: 'created', value: (b: Build) => b.created_at },
]

/**
 * Prints the build's stream to its end, one line per event (JSON lines with -o json): the kept log is
 * replayed first. Answers normally only when the build completed; a failed or cancelled one is exit 3.
 */
async function followBuild(ctx: CommandContext, s: Session, id: string): Promise<void> {
  const json = ctx.format === 'json'
  const line = (text: string) => ctx.io.stdout.write(text + '\n')
  for await (const e of followStream(s, `/v1/api/builds/${encodeURIComponent(id)}/stream`, { signal: ctx.io.signal })) {
    if (json && e.type !== 'metadata') line(JSON.stringify({ type: e.type, ...(e.data as object) }))
    if (e.type === 'progress' && !json) {
      const p = e.data as BuildProgress
      line(`-- ${p.status} ${p.progress}%`)
    } else if (e.type === 'log' && !json) {
      const l = e.data as BuildLog
      line(`[${l.phase}] ${l.line}`)
    } else if (e.type === 'complete') {
      const c = e.data as BuildComplete
      if (!json) line(`completed: ${c.image_ref}@${c.image_digest}`)
      return
    } else if (e.type === 'failed') {
      const f = e.data as BuildFailed
      throw new CliError(`build ${id} failed${f.phase ? ` at ${f.phase}` : ''}: ${f.error}`, EXIT.failed)
    } else if (e.type === 'cancelled') throw new CliError(`build ${id} was cancelled`, EXIT.failed)
  }
  throw new CliError(`the stream of build ${id} ended before the build did`)
}

export function registerBuild(program: Command, ctx: CommandContext): void {
  const build = program.command('build').description('build images from git repositories in a cluster and push them to a registry')

  build.command('start')
    .description('start a build: clone REPO, build its Dockerfile with BuildKit in the cluster, push to the registry')
    .argument('<repo>', 'git repository URL (https)')
    .requiredOption('--registry <registry>', 'registry to push to (name or id); its stored login is used')
    .requiredOption('--image <name[:tag]>', 'repository inside the registry, without the host (e.g. acme/api:1.2; tag default latest)')
    .option('--cluster <cluster>', 'cluster to build in (default: your default cluster)')
    .option('-n, --namespace <namespace>', 'namespace of the build Job (default: default)')
    .option('--branch <branch>', 'branch to build (default: the repository\'s default branch)')
    .option('--commit <sha>', 'full commit id to build (wins over --branch)')
    .option('--context <dir>', 'build context inside the repository (default .)')
    .option('-f, --dockerfile <path>', 'Dockerfile, relative to the context (default Dockerfile)')
    .option('--build-arg <KEY=VALUE>', 'a Dockerfile ARG (repeatable; not secret: visible in the Job)', collect, [])
    .option('--workflow <workflow>', 'with --node: on success, pin that node\'s image to the pushed digest')
    .option('--node <node-id>', 'the node of --workflow to pin')
    .option('--follow', 'print the build\'s progress and log until it ends; exit 0 only when it completed')
    .addHelpText('after', `
Without --follow: prints the build (pending) and exits 0; follow it later with cwo build logs BUILD.
With --follow: one line per event ([phase] log line, -- status N%), then "completed: IMAGE@DIGEST";
-o json prints each event as one JSON object per line. Exit 3 when the build failed or was cancelled.`)
    .action(async (repo: string, o: StartOptions) => {
      if (Boolean(o.workflow) !== Boolean(o.node)) throw new CliError('--workflow and --node go together', EXIT.usage)
      const args: Record<string, string> = {}
      for (const a of o.buildArg) {
        const eq = a.indexOf('=')
        if (eq < 1) throw new CliError(`--build-arg takes KEY=VALUE, not ${JSON.stringify(a)}`, EXIT.usage)
        args[a.slice(0, eq)] = a.slice(eq + 1)
      }
      const s = await ctx.session()
      const [registryId, cluster, workflowId] = await Promise.all([
        resolveRegistryId(s, o.registry),
        o.cluster ?? defaultCluster(s),
        o.workflow ? resolveWorkflowId(s, o.workflow) : undefined,
      ])
      const started = await ok(s.server, s.client.POST('/v1/api/builds/start', {
        body: {
          repo_url: repo, registry_id: registryId, ...splitImage(o.image), cluster, namespace: o.namespace,
          branch: o.branch, commit: o.commit, context_dir: o.context, dockerfile: o.dockerfile,
          ...(o.buildArg.length && { build_args: args }), workflow_id: workflowId, node_id: o.node,
        },
      }))
      if (!o.follow) return ctx.print(started, () => table([started], buildColumns))
      ctx.note(`build ${started.id} started (Ctrl-C stops following, not the build: cwo build cancel ${started.id})`)
      await followBuild(ctx, s, started.id)
    })

  build.command('list')
    .description('your builds, newest first')
    .option('--status <status>', 'only builds in this status')
    .option('--workflow <workflow>', 'only builds pinning a node of this workflow')
    .option('--search <text>', 'matches the image name, tag and repository URL')
    .option('--limit <n>', 'at most this many (1-100)', (v) => Number(v))
    .action(async (o: { status?: Build['status']; workflow?: string; search?: string; limit?: number }) => {
      const s = await ctx.session()
      const workflowId = o.workflow ? await resolveWorkflowId(s, o.workflow) : undefined
      const page = await ok(s.server, s.client.GET('/v1/api/builds', { params: { query: { status: o.status, workflow_id: workflowId, search: o.search, limit: o.limit } } }))
      ctx.print(page, () => table(page.builds, buildColumns))
    })

  build.command('get')
    .description('one build: status, phase, image and digest, error')
    .argument('<build>', 'build id')
    .action(async (id: string) => {
      const s = await ctx.session()
      ctx.print(await ok(s.server, s.client.GET('/v1/api/builds/{id}', { params: { path: { id } } })))
    })

  build.command('logs')
    .description('print a build\'s log (replayed from the start) and follow it until the build ends')
    .argument('<build>', 'build id')
    .addHelpText('after', '\nExit 0 when the build completed, 3 when it failed or was cancelled, 130 on Ctrl-C.')
    .action(async (id: string) => {
      const s = await ctx.session()
      await followBuild(ctx, s, id)
    })

  build.command('cancel')
    .description('cancel a running build (its Job and pods are deleted)')
    .argument('<build>', 'build id')
    .action(async (id: string) => {
      const s = await ctx.session()
      const b = await ok(s.server, s.client.POST('/v1/api/builds/{id}/cancel', { params: { path: { id } } }))
      ctx.print(b, () => table([b], buildColumns))
    })
}
