// `npm run kube-sim`: start a simulator and print where its kubeconfig is, until interrupted.
import { startKubeSim, type KubeSimOptions } from './index.ts'

const port = Number(process.env.KUBE_SIM_PORT ?? 0)
const opts: KubeSimOptions = {
  port,
  nodes: Number(process.env.KUBE_SIM_NODES ?? 2),
  // Human-scale timings so `kubectl get -w` shows the transitions (KUBE_SIM_FAST=1 keeps the test defaults).
  timing: process.env.KUBE_SIM_FAST ? { cronMinuteMs: 1000 } : { podStartMs: 1500, podReadyMs: 1500, jobRunMs: 5000, podTerminateMs: 2000, logIntervalMs: 1000, loadBalancerMs: 1000, pvcBindMs: 500, crashBackoffMs: 5000 },
  bookmarkIntervalMs: 10_000,
}
const sim = await startKubeSim(opts)
const path = sim.kubeconfigPath('token')
process.stdout.write(`kube-sim listening on ${sim.url}\nkubeconfig: ${path}\n  kubectl --kubeconfig ${path} get nodes\n`)
process.stdout.write(`client-certificate kubeconfig: ${sim.kubeconfigPath('cert')}\nservice-account kubeconfig: ${sim.kubeconfigPath('serviceaccount')}\n`)
const shutdown = () => { void sim.close().then(() => process.exit(0)) }
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)
