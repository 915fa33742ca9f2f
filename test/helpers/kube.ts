// One simulated cluster per test file, closed at the end; optionally trusting an OIDC issuer.
import { startKubeSim, type KubeSim, type KubeSimOptions } from '../kube-sim/index.ts'

interface Teardown { teardown(fn: () => unknown): void }

export async function startTestCluster(t: Teardown, options: KubeSimOptions = {}): Promise<KubeSim> {
  const sim = await startKubeSim(options)
  t.teardown(() => sim.close())
  return sim
}

/** The body that registers the simulator as a cluster, with its admin token and CA. */
export function simClusterBody(sim: KubeSim, name: string): { name: string; server: string; auth_type: 'token'; credentials: { token: string; ca_data: string } } {
  return { name, server: sim.url, auth_type: 'token', credentials: { token: sim.identities.admin.token, ca_data: sim.caPem } }
}
