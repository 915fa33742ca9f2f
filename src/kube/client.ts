// @kubernetes/client-node is large (seconds to import on a busy machine) and only needed once a cluster is
// contacted, so it is loaded on first use rather than at start-up.
type ClientNode = typeof import('@kubernetes/client-node')

let loading: Promise<ClientNode> | undefined

export function k8s(): Promise<ClientNode> {
  loading ??= import('@kubernetes/client-node')
  return loading
}
