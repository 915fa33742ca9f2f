// Reads for tracked resources: list a kind across namespaces by label, get one object, list pods by
// selector. Answers are plain JSON (client-node's typed models turned back into what the API server sent).
// Secrets are listed as metadata only (PartialObjectMetadataList), so their data never leaves the cluster.
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from './client.ts'
import { clusterUpstreamError, describeClusterError } from './upstream-errors.ts'
import { UpstreamError } from '../errors.ts'
import type { KubeObject } from '../manifests/types.ts'

const METADATA_ONLY = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;q=0.9'

export interface ResourceReader {
  /** Every object of the kind (all namespaces) matching the label selector; [] when the cluster does not serve the kind. */
  list(apiVersion: string, kind: string, labelSelector?: string, namespace?: string): Promise<KubeObject[]>
  /** The object, or null when it is not there (or its kind is not served). */
  get(apiVersion: string, kind: string, namespace: string | null, name: string): Promise<KubeObject | null>
}

const httpCode = (err: unknown): number | null => {
  const code = (err as { code?: unknown })?.code
  return err instanceof Error && typeof code === 'number' && 'body' in err ? code : null
}

function plain(obj: unknown): KubeObject {
  const copy = JSON.parse(JSON.stringify(obj)) as KubeObject
  if (copy.metadata) delete copy.metadata.managedFields
  return copy
}

/** The credentials may not make this request (403): a caller may retry more narrowly (one namespace). */
export class ReadForbidden extends UpstreamError {}

/** Every failure except "not there" is the cluster answering badly or not at all (502). */
async function guard<T>(call: () => Promise<T>, missing: T): Promise<T> {
  try {
    return await call()
  } catch (err) {
    const code = httpCode(err)
    if (code === 404) return missing
    if (code === 403) throw new ReadForbidden(describeClusterError(err))
    throw clusterUpstreamError(err)
  }
}

export async function resourceReader(kc: KubeConfig, timeoutMs: number): Promise<ResourceReader> {
  const { KubernetesObjectApi, ServerConfiguration, createConfiguration } = await k8s()
  const cluster = kc.getCurrentCluster()
  if (!cluster) throw clusterUpstreamError(new Error('no current cluster'))
  const config = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [{
      pre: async (ctx) => {
        ctx.setSignal(AbortSignal.timeout(timeoutMs))
        // Secret lists (the only list URLs ending so) come back as metadata: no data crosses the wire.
        if (/\/secrets$/.test(new URL(ctx.getUrl()).pathname)) ctx.setHeaderParam('Accept', METADATA_ONLY)
        return ctx
      },
      post: async (rsp) => rsp,
    }],
  })
  const api = new KubernetesObjectApi(config)
  return {
    async list(apiVersion, kind, labelSelector, namespace) {
      const found = await guard(() => api.list(apiVersion, kind, namespace, undefined, undefined, undefined, undefined, labelSelector), null)
      if (!found) return []
      // Items of a list (and of a metadata-only list) do not say what they are; the request does.
      return (found.items ?? []).map((item) => ({ ...plain(item), apiVersion, kind }))
    },
    async get(apiVersion, kind, namespace, name) {
      const found = await guard(() => api.read({ apiVersion, kind, metadata: { name, ...(namespace && { namespace }) } }), null)
      return found && { ...plain(found), apiVersion, kind }
    },
  }
}
