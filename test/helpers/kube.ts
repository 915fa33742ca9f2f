// One simulated cluster per test file, closed at the end; optionally trusting an OIDC issuer.
import { startKubeSim, type KubeSim, type KubeSimOptions } from '../kube-sim/index.ts'

interface Teardown { teardown(fn: () => unknown): void }

export async function startTestCluster(t: Teardown, options: KubeSimOptions = {}): Promise<KubeSim> {
  const sim = await startKubeSim(options)
  t.teardown(() => sim.close())
  return sim
}
