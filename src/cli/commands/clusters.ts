// cwo clusters list | add NAME --kubeconfig FILE | test NAME | remove NAME --yes: what a run needs first.
// Only kubeconfig credentials here (the shape a cluster's admin hands out); the API takes the other auth
// types too (docs/clusters-and-security.md). The kubeconfig goes to the server, which seals it; cwo prints
// no credential back (the API answers none).
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Command } from 'commander'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import { table } from '../output.ts'

/** A kubeconfig is a few KiB; the API refuses larger bodies anyway, so a wrong file fails here, clearly. */
const MAX_KUBECONFIG_BYTES = 256 * 1024

export function registerClusters(program: Command, ctx: CommandContext): void {
  const clusters = program.command('clusters').description('the clusters you deploy to: list, add from a kubeconfig, test, remove')

  clusters.command('list')
    .description('the clusters you own or that are shared with you (your default marked)')
    .action(async () => {
      const s = await ctx.session()
      const page = await ok(s.server, s.client.GET('/v1/api/clusters'))
      ctx.print(page, () => table(page.clusters, [
        { header: 'name', value: (c) => `${c.name}${c.is_default ? ' (default)' : ''}` },
        { header: 'status', value: (c) => c.status },
        { header: 'server', value: (c) => c.server },
        { header: 'auth', value: (c) => c.auth_type },
        { header: 'access', value: (c) => c.access },
        { header: 'version', value: (c) => c.metadata.version },
      ]))
    })

  clusters.command('add')
    .description('register a cluster from a kubeconfig file (your first cluster becomes your default)')
    .argument('<name>', 'its name in the service (a DNS label: lowercase letters, digits, -)')
    .requiredOption('--kubeconfig <file>', 'the kubeconfig file (- for stdin); exec plugins and file paths in it are refused')
    .option('--context <name>', 'the kubeconfig context (default: its current context)')
    .option('--default', 'make it your default cluster')
    .option('--description <text>', 'a description')
    .action(async (name: string, o: { kubeconfig: string; context?: string; default?: boolean; description?: string }) => {
      const kubeconfig = await readKubeconfig(ctx, o.kubeconfig)
      const s = await ctx.session()
      const created = await ok(s.server, s.client.POST('/v1/api/clusters', {
        body: { name, auth_type: 'kubeconfig', kubeconfig, context: o.context, description: o.description, ...(o.default && { is_default: true }) },
      }))
      ctx.note(`cluster/${created.name} added${created.is_default ? ' (your default)' : ''}`)
      if (ctx.format !== 'table') ctx.print(created)
    })

  clusters.command('test')
    .description('ask the cluster whether it answers: its version and node count (exit 1 when it does not)')
    .argument('<name>', 'the cluster\'s name')
    .action(async (name: string) => {
      const s = await ctx.session()
      const health = await ok(s.server, s.client.POST('/v1/api/clusters/{name}/test', { params: { path: { name } } }))
      ctx.print(health, () => `${name}: ${health.status}, Kubernetes ${health.version}, ${health.nodes} nodes\n`)
    })

  clusters.command('remove')
    .description('remove a cluster from the service (what was deployed there stays in the cluster)')
    .argument('<name>', 'the cluster\'s name')
    .option('--yes', 'really remove it')
    .action(async (name: string, o: { yes?: boolean }) => {
      if (!o.yes) throw new CliError(`removing cluster ${name} needs --yes`, EXIT.usage)
      const s = await ctx.session()
      await ok(s.server, s.client.DELETE('/v1/api/clusters/{name}', { params: { path: { name } } }))
      ctx.note(`cluster/${name} removed`)
    })
}

async function readKubeconfig(ctx: CommandContext, file: string): Promise<string> {
  let text = ''
  if (file === '-') {
    ctx.io.stdin.setEncoding('utf8')
    for await (const chunk of ctx.io.stdin) {
      text += chunk
      if (text.length > MAX_KUBECONFIG_BYTES) break
    }
  } else {
    try { text = await readFile(resolve(ctx.io.cwd, file), 'utf8') } catch (err) {
      throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`, EXIT.usage)
    }
  }
  if (Buffer.byteLength(text) > MAX_KUBECONFIG_BYTES) throw new CliError(`${file}: larger than ${MAX_KUBECONFIG_BYTES / 1024} KiB, not a kubeconfig`, EXIT.usage)
  if (!text.trim()) throw new CliError(`${file} is empty`, EXIT.usage)
  return text
}
