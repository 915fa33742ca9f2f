// The objects an image build is in the cluster (/tmp/team/build-contract.md, the shape a real cluster runs:
// alpine/git for the clone, BuildKit rootless in daemonless mode for build and push): a short-lived
// dockerconfigjson Secret with the registry login, and a Job whose pod clones in three init containers
// and builds in the main one. Pure: no I/O, so the exact shape is tested without a cluster.
import { posix } from 'node:path'
import { MANAGED_BY_LABEL } from '../manifests/metadata.ts'
import type { KubeObject } from '../manifests/types.ts'

/**
 * The build contract's managed-by value, deliberately not the one workflow objects carry: the resource
 * watchers and sync select on that one, and build Jobs and pods are not a workflow's resources.
 */
export const BUILD_MANAGED_BY = 'cluster-workflow-orchestrator'
export const BUILD_COMPONENT = 'image-build'
export const BUILD_ID_LABEL = 'orchestrator.build-id'
/** Containers in the order the pod runs them; their logs are followed in this order. */
export const BUILD_CONTAINERS = ['git-init', 'git-fetch', 'git-checkout', 'build'] as const
export type BuildContainer = typeof BUILD_CONTAINERS[number]

export const buildObjectName = (buildId: string) => `build-${buildId}`
export const buildLabels = (buildId: string): Record<string, string> => ({
  [MANAGED_BY_LABEL]: BUILD_MANAGED_BY, 'app.kubernetes.io/component': BUILD_COMPONENT, [BUILD_ID_LABEL]: buildId,
})
/** Selects every build pod and Job this service made (the build id narrows it to one). */
export const BUILD_SELECTOR = `${MANAGED_BY_LABEL}=${BUILD_MANAGED_BY},app.kubernetes.io/component=${BUILD_COMPONENT}`

export interface BuildJobSpec {
  buildId: string
  namespace: string
  repoUrl: string
  /** A commit wins over a branch; neither → the repository's HEAD. */
  branch: string | null
  commit: string | null
  /** Relative to the repository root, already checked (no `..`, not absolute). */
  contextDir: string
  /** Relative to the repository root. */
  dockerfile: string
  buildArgs: Record<string, string>
  /** host/name:tag as pushed. */
  imageRef: string
  /** The registry is plain http: BuildKit must be told to push without TLS. */
  insecureRegistry: boolean
}

export interface BuildJobConfig {
  gitImage: string
  builderImage: string
  activeDeadlineSeconds: number
  ttlSecondsAfterFinished: number
  cpuRequest: string; cpuLimit: string; memoryRequest: string; memoryLimit: string
}

/** Docker Hub logins live under this key in a docker config, not under `docker.io`. */
const DOCKER_HUB_AUTH_KEY = 'https://index.docker.io/v1/'

/** `.dockerconfigjson` for the registry host: one `auths` entry with the login, none for anonymous access. */
export function dockerConfigJson(host: string, login: { username: string; secret: string } | null): string {
  if (!login) return JSON.stringify({ auths: {} })
  const key = host === 'docker.io' ? DOCKER_HUB_AUTH_KEY : host
  return JSON.stringify({ auths: { [key]: { auth: Buffer.from(`${login.username}:${login.secret}`, 'utf8').toString('base64') } } })
}

export function buildSecret(spec: Pick<BuildJobSpec, 'buildId' | 'namespace'>, configJson: string): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Secret',
    metadata: { name: buildObjectName(spec.buildId), namespace: spec.namespace, labels: buildLabels(spec.buildId) },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(configJson, 'utf8').toString('base64') },
  } as KubeObject
}

/** What git fetches: the commit itself when given (servers allow fetching a reachable sha), else the branch. */
export function fetchRef(spec: Pick<BuildJobSpec, 'branch' | 'commit'>): string {
  if (spec.commit) return spec.commit
  return spec.branch ? `refs/heads/${spec.branch}` : 'HEAD'
}

export function builderArgs(spec: BuildJobSpec): string[] {
  const src = '/workspace/src'
  const context = spec.contextDir && spec.contextDir !== '.' ? posix.join(src, spec.contextDir) : src
  const dockerfileDir = posix.dirname(spec.dockerfile)
  const args = [
    'build', '--progress', 'plain', '--frontend', 'dockerfile.v0',
    '--local', `context=${context}`,
    '--local', `dockerfile=${dockerfileDir === '.' ? src : posix.join(src, dockerfileDir)}`,
    '--opt', `filename=${posix.basename(spec.dockerfile)}`,
  ]
  for (const [key, value] of Object.entries(spec.buildArgs)) args.push('--opt', `build-arg:${key}=${value}`)
  args.push('--output', `type=image,name=${spec.imageRef},push=true${spec.insecureRegistry ? ',registry.insecure=true' : ''}`)
  return args
}

export function buildJob(spec: BuildJobSpec, config: BuildJobConfig): KubeObject {
  const name = buildObjectName(spec.buildId)
  const labels = buildLabels(spec.buildId)
  const workspace = { name: 'workspace', mountPath: '/workspace' }
  const git = (container: string, args: string[]) => ({ name: container, image: config.gitImage, args, volumeMounts: [workspace] })
  return {
    apiVersion: 'batch/v1', kind: 'Job',
    metadata: { name, namespace: spec.namespace, labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: config.activeDeadlineSeconds,
      ttlSecondsAfterFinished: config.ttlSecondsAfterFinished,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          volumes: [
            { name: 'workspace', emptyDir: {} },
            { name: 'docker-config', secret: { secretName: name, items: [{ key: '.dockerconfigjson', path: 'config.json' }] } },
            { name: 'buildkit-state', emptyDir: {} },
          ],
          initContainers: [
            git('git-init', ['init', '-q', '/workspace/src']),
            git('git-fetch', ['-C', '/workspace/src', 'fetch', '--depth', '1', '--no-tags', spec.repoUrl, fetchRef(spec)]),
            git('git-checkout', ['-C', '/workspace/src', 'checkout', '-q', 'FETCH_HEAD']),
          ],
          containers: [{
            name: 'build',
            image: config.builderImage,
            command: ['buildctl-daemonless.sh'],
            args: builderArgs(spec),
            env: [
              // Rootless BuildKit inside an unprivileged pod cannot make its own process sandbox.
              { name: 'BUILDKITD_FLAGS', value: '--oci-worker-no-process-sandbox' },
              { name: 'DOCKER_CONFIG', value: '/home/user/.docker' },
            ],
            volumeMounts: [
              workspace,
              { name: 'docker-config', mountPath: '/home/user/.docker', readOnly: true },
              { name: 'buildkit-state', mountPath: '/home/user/.local/share/buildkit' },
            ],
            securityContext: {
              runAsUser: 1000, runAsGroup: 1000,
              // BuildKit rootless needs unshare/mount inside the container: the default profiles forbid both.
              seccompProfile: { type: 'Unconfined' },
              appArmorProfile: { type: 'Unconfined' },
            },
            resources: {
              requests: { cpu: config.cpuRequest, memory: config.memoryRequest },
              limits: { cpu: config.cpuLimit, memory: config.memoryLimit },
            },
          }],
        },
      },
    },
  } as KubeObject
}

/** The merge patch that hands the Secret to the Job, so deleting the Job (or its TTL) removes the Secret too. */
export function ownedByJob(job: { metadata: { name: string; uid?: string } }): { metadata: { ownerReferences: object[] } } {
  return {
    metadata: {
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: job.metadata.uid, blockOwnerDeletion: false, controller: false }],
    },
  }
}
