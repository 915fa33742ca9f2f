// A sync puts back what was deployed, but server-side apply never removes a field another manager owns, so a
// label someone added (`kubectl label`) outlives it. A sync removes such labels with one merge patch per
// object, written as this service's field manager; nothing else of the object is touched.
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from './client.ts'
import { asSpec, objectClient } from './deploy-client.ts'
import { clusterUpstreamError } from './upstream-errors.ts'
import { MANAGED_BY } from '../manifests/metadata.ts'

export interface LabelledRef { apiVersion: string; kind: string; namespace: string | null; name: string }

export async function removeLabels(kc: KubeConfig, ref: LabelledRef, keys: string[], timeoutMs: number): Promise<void> {
  if (!keys.length) return
  const { PatchStrategy } = await k8s()
  const client = await objectClient(kc, timeoutMs)
  try {
    // JSON merge patch: a key set to null is removed.
    const patch = { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, ...(ref.namespace && { namespace: ref.namespace }), labels: Object.fromEntries(keys.map((k) => [k, null])) } }
    await client.api.patch(asSpec(patch as never), undefined, undefined, MANAGED_BY, undefined, PatchStrategy.MergePatch)
  } catch (err) {
    throw clusterUpstreamError(err)
  } finally {
    client.close()
  }
}
