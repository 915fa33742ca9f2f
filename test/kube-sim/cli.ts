// `npm run kube-sim`: start a simulator and print where its kubeconfig is, until interrupted.
// `--git` and `--registry` also serve, on loopback, what an image build needs and a laptop without internet
// lacks: a Git repository holding a Dockerfile, and a registry with a login to push to (the same servers the
// build tests use). `--vars-file <path>` writes every address and login as shell variables, so a walkthrough
// can source them instead of copying random ports by hand (docs/builds.md, "Trying a build on the simulator"); it is
// not `--env-file` because Node 20 takes that flag for itself even after the script's name.
import { parseArgs } from 'node:util'
import { writeFile, rm } from 'node:fs/promises'
import { startKubeSim, type KubeSimOptions } from './index.ts'
import { startGitServer, type GitServer } from '../helpers/git-server.ts'
import { startTestRegistry, type TestRegistry } from '../helpers/test-registry.ts'

const usage = `usage: npm run kube-sim -- [--git] [--registry] [--vars-file <path>]
  --git              serve a Git repository (app.git, a Dockerfile and a small site) over HTTP on loopback
  --registry         serve an image registry (HTTP, Basic login builder / kube-sim) on loopback
  --vars-file <path> write KUBECONFIG_SIM, GIT_REPO_URL, REGISTRY_URL, REGISTRY_USERNAME, REGISTRY_PASSWORD
                     as shell variables to <path> (removed again on exit)
environment: KUBE_SIM_PORT, KUBE_SIM_NODES, KUBE_SIM_FAST=1 (test timings)
`

let args: { git?: boolean; registry?: boolean; 'vars-file'?: string; help?: boolean }
try {
  args = parseArgs({ options: { git: { type: 'boolean' }, registry: { type: 'boolean' }, 'vars-file': { type: 'string' }, help: { type: 'boolean', short: 'h' } } }).values
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n${usage}`)
  process.exit(2)
}
if (args.help) { process.stdout.write(usage); process.exit(0) }

const opts: KubeSimOptions = {
  port: Number(process.env.KUBE_SIM_PORT ?? 0),
  nodes: Number(process.env.KUBE_SIM_NODES ?? 2),
  // Human-scale timings so `kubectl get -w` shows the transitions (KUBE_SIM_FAST=1 keeps the test defaults).
  timing: process.env.KUBE_SIM_FAST ? { cronMinuteMs: 1000 } : { podStartMs: 1500, podReadyMs: 1500, jobRunMs: 5000, podTerminateMs: 2000, logIntervalMs: 1000, loadBalancerMs: 1000, pvcBindMs: 500, crashBackoffMs: 5000 },
  bookmarkIntervalMs: 10_000,
}

// What the files in the served repository are: a build of it succeeds on the simulator (whose builder reads
// the Dockerfile) and would on a real BuildKit too.
const APP_FILES = {
  Dockerfile: 'FROM nginx:1.27-alpine\nCOPY site /usr/share/nginx/html\n',
  'site/index.html': '<!doctype html>\n<title>hello</title>\n<h1>Hello from a kube-sim build</h1>\n',
}
// A fixed login, printed below: this registry only listens on loopback and only while the simulator runs,
// and a walkthrough that works as written needs a password it can know in advance.
const REGISTRY_LOGIN = { username: 'builder', password: 'kube-sim' }

const sim = await startKubeSim(opts)
let git: GitServer | undefined
let registry: TestRegistry | undefined
let varsFile: string | undefined
let closing: Promise<void> | undefined
// Stops every server, then exits: whichever way the process is told to stop, nothing keeps its port.
const shutdown = (code: number) => {
  closing ??= Promise.allSettled([sim.close(), git?.close(), registry?.close(), varsFile && rm(varsFile, { force: true })])
    .then(() => process.exit(code))
  return closing
}
process.on('SIGINT', () => void shutdown(0))
process.on('SIGTERM', () => void shutdown(0))
process.on('SIGHUP', () => void shutdown(0))

try {
  const kubeconfig = sim.kubeconfigPath('token')
  const out = [
    `kube-sim listening on ${sim.url} (pid ${process.pid})`,
    `kubeconfig: ${kubeconfig}`,
    `  kubectl --kubeconfig ${kubeconfig} get nodes`,
    `client-certificate kubeconfig: ${sim.kubeconfigPath('cert')}`,
    `service-account kubeconfig: ${sim.kubeconfigPath('serviceaccount')}`,
  ]
  const vars: Record<string, string> = { KUBECONFIG_SIM: kubeconfig }
  if (args.git) {
    git = await startGitServer()
    const repo = await git.addRepo('app', APP_FILES)
    out.push(`git repository: ${repo.url} (branch main, commit ${repo.commit.slice(0, 12)})`)
    vars.GIT_REPO_URL = repo.url
  }
  if (args.registry) {
    registry = await startTestRegistry({ auth: 'basic', ...REGISTRY_LOGIN })
    out.push(`registry: ${registry.url} (login ${registry.username} / ${registry.password})`)
    Object.assign(vars, { REGISTRY_URL: registry.url, REGISTRY_USERNAME: registry.username, REGISTRY_PASSWORD: registry.password })
  }
  if (args['vars-file']) {
    const quote = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`
    await writeFile(args['vars-file'], Object.entries(vars).map(([k, v]) => `${k}=${quote(v)}\n`).join(''), { mode: 0o600 })
    varsFile = args['vars-file']
    out.push(`variables: ${varsFile} (${Object.keys(vars).join(', ')})`)
  }
  process.stdout.write(`${out.join('\n')}\n`)
} catch (err) {
  process.stderr.write(`kube-sim: ${(err as Error).message}\n`)
  await shutdown(1)
}
