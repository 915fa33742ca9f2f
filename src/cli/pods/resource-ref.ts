// A RESOURCE argument of `cwo logs` and `cwo exec`: a tracked resource's id, or `kind/name` as kubectl
// spells it (deployment/web, deploy/web, po/web-abc), found among the caller's tracked resources.
import type { Command } from 'commander'
import { ok } from '../client.ts'
import { CliError, EXIT } from '../errors.ts'
import type { Session } from '../session.ts'
import { resolveWorkflowId } from '../workflow-ref.ts'

/** kubectl's short names and plurals, to the Kubernetes kind the API filters on (exactly). */
const KINDS: Record<string, string> = {}
for (const [kind, ...aliases] of [
  ['Pod', 'pod', 'pods', 'po'],
  ['Deployment', 'deployment', 'deployments', 'deploy'],
  ['StatefulSet', 'statefulset', 'statefulsets', 'sts'],
  ['DaemonSet', 'daemonset', 'daemonsets', 'ds'],
  ['ReplicaSet', 'replicaset', 'replicasets', 'rs'],
  ['Job', 'job', 'jobs'],
  ['CronJob', 'cronjob', 'cronjobs', 'cj'],
  ['Service', 'service', 'services', 'svc'],
]) for (const a of aliases) KINDS[a] = kind

export interface ResourceFilters { namespace?: string; workflow?: string; cluster?: string }

/** The options that narrow a `kind/name` down when several resources share it. */
export function resourceFilterOptions(cmd: Command): Command {
  return cmd
    .option('-n, --namespace <namespace>', 'the namespace of a kind/name RESOURCE')
    .option('--workflow <workflow>', 'only resources of this workflow (id or name)')
    .option('--cluster <cluster>', 'only resources in this cluster (name or id)')
}

/** The tracked resource's id: `ref` itself when it is not `kind/name`. */
export async function resolveResourceId(s: Session, ref: string, f: ResourceFilters): Promise<string> {
  const slash = ref.indexOf('/')
  if (slash < 0) {
    // Record ids are ObjectIds; a bare name is the usual slip, and the kind is what it lacks.
    if (!/^[0-9a-f]{24}$/i.test(ref)) throw new CliError(`RESOURCE is a resource id or kind/name (e.g. deployment/${/^[a-z0-9.-]+$/.test(ref) ? ref : 'web'}), not ${JSON.stringify(ref)}`, EXIT.usage)
    return ref
  }
  const kindWord = ref.slice(0, slash)
  const name = ref.slice(slash + 1)
  // An exact Kind (Deployment) is taken as is, so kinds this table does not know still work.
  const kind = KINDS[kindWord.toLowerCase()] ?? (/^[A-Z]/.test(kindWord) ? kindWord : undefined)
  if (!kind || !name || name.includes('/')) throw new CliError(`RESOURCE is a resource id or kind/name (e.g. deployment/web), not ${JSON.stringify(ref)}`, EXIT.usage)
  const workflowId = f.workflow ? await resolveWorkflowId(s, f.workflow) : undefined
  const page = await ok(s.server, s.client.GET('/v1/api/resources', {
    params: { query: { kind, search: name, namespace: f.namespace, cluster: f.cluster, workflow_id: workflowId, limit: 100, sort: 'updated_at' } },
  }))
  const named = page.resources.filter((r) => r.name === name)
  // A resource gone from the cluster has no pod to read; it is chosen only when nothing else matches.
  const live = named.filter((r) => r.status !== 'deleted')
  const candidates = live.length ? live : named
  if (candidates.length === 1) return candidates[0].id
  if (!candidates.length) throw new CliError(`404: no tracked ${kind} named ${JSON.stringify(name)}${f.namespace ? ` in namespace ${f.namespace}` : ''}`)
  const which = candidates.map((r) => `${r.id} (${r.cluster}/${r.namespace ?? ''}, workflow ${r.workflow_id})`).join(', ')
  throw new CliError(`${candidates.length} tracked ${kind}s are named ${JSON.stringify(name)}: narrow with -n, --workflow or --cluster, or use the id: ${which}`)
}
