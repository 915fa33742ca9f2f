import type { ObjectApi } from './api.ts'
import type { Registry } from './registry.ts'
import type { KObject } from './util.ts'

export const nodeName = (i: number) => `kube-sim-node-${i + 1}`

/** The objects a fresh small cluster has: system namespaces, Ready nodes, the `kubernetes` Service. */
export function bootstrap(api: ObjectApi, reg: Registry, o: { nodes: number; host: string; port: () => number }): void {
  const rt = (g: string, p: string) => reg.byGroupPlural(g, p)!
  const sys = { fieldManager: 'kube-apiserver' }
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) api.create(rt('', 'namespaces'), undefined, { metadata: { name: ns } }, sys)
  for (let i = 0; i < o.nodes; i++) {
    const name = nodeName(i)
    const node: KObject = {
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64',
          'node.kubernetes.io/instance-type': 'kube-sim', 'topology.kubernetes.io/zone': `sim-zone-${(i % 3) + 1}`,
        },
        annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
      },
      spec: { podCIDR: `10.244.${i}.0/24`, podCIDRs: [`10.244.${i}.0/24`], providerID: `kube-sim://${name}` },
    }
    const created = api.create(rt('', 'nodes'), undefined, node, { fieldManager: 'kubelet' })
    const now = created.metadata.creationTimestamp
    const capacity = { cpu: '4', memory: '16384Mi', pods: '110', 'ephemeral-storage': '100Gi', 'hugepages-2Mi': '0' }
    created.status = {
      capacity, allocatable: { ...capacity, cpu: '3800m', memory: '15872Mi' },
      conditions: [
        ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
        ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
      ].map(([type, status, reason, message]) => ({ type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now })),
      addresses: [{ type: 'InternalIP', address: `172.18.0.${i + 2}` }, { type: 'Hostname', address: name }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: created.metadata.uid!.replace(/-/g, ''), systemUUID: created.metadata.uid, bootID: created.metadata.uid,
        kernelVersion: '6.1.0-kube-sim', osImage: 'kube-sim (simulated node)', containerRuntimeVersion: 'containerd://1.7.24',
        kubeletVersion: 'v1.32.0', kubeProxyVersion: 'v1.32.0', operatingSystem: 'linux', architecture: 'amd64',
      },
      images: [],
    }
    api.update(rt('', 'nodes'), undefined, name, created, { fieldManager: 'kubelet', subresource: 'status' })
  }
  api.create(rt('', 'services'), 'default', {
    metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: o.port() }], sessionAffinity: 'None', type: 'ClusterIP' },
  }, sys)
  api.create(rt('', 'endpoints'), 'default', {
    metadata: { name: 'kubernetes', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
    subsets: [{ addresses: [{ ip: o.host }], ports: [{ name: 'https', port: o.port(), protocol: 'TCP' }] }],
  }, sys)
}
