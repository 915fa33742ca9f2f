// The cluster calls of a build: create the Secret and the Job, hand the Secret to the Job, read the Job
// back, and remove both. Failures are described from the API server's Status (never its raw body).
import type { KubeConfig } from '@kubernetes/client-node'
import { objectClient, asSpec, apiFailure, apiMessage, isNotFound, plain, unreachable } from './deploy-client.ts'
import { buildObjectName, ownedByJob } from './build-job.ts'
import { describeClusterError } from './upstream-errors.ts'
import type { KubeObject } from '../manifests/types.ts'

export function describeBuildClusterError(err: unknown): string {
  const failure = apiFailure(err)
  if (failure) return apiMessage(failure)
  return unreachable(err) ?? describeClusterError(err)
}

/** Creates the Secret then the Job, then makes the Job the Secret's owner. A Secret left by a failed Job create is removed. */
export async function createBuildObjects(kc: KubeConfig, secret: KubeObject, job: KubeObject, timeoutMs: number): Promise<KubeObject> {
  const client = await objectClient(kc, timeoutMs)
  try {
    await client.api.create(asSpec(secret))
    let created: KubeObject
    try {
      created = plain(await client.api.create(asSpec(job)))
    } catch (err) {
      await client.api.delete(asSpec(secret)).catch(() => undefined)
      throw err
    }
    const { PatchStrategy } = await import('@kubernetes/client-node')
    const patch = { apiVersion: 'v1', kind: 'Secret', metadata: { name: secret.metadata.name, namespace: secret.metadata.namespace, ...ownedByJob(created as { metadata: { name: string; uid?: string } }).metadata } }
    // Not fatal: the Secret is also deleted explicitly when the build ends.
    await client.api.patch(asSpec(patch as KubeObject), undefined, undefined, undefined, undefined, PatchStrategy.MergePatch).catch(() => undefined)
    return created
  } finally {
    client.close()
  }
}

/** The build's Job as it is now, or null when it is gone. */
export async function readBuildJob(kc: KubeConfig, namespace: string, buildId: string, timeoutMs: number): Promise<KubeObject | null> {
  const client = await objectClient(kc, timeoutMs)
  try {
    return plain(await client.api.read({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: buildObjectName(buildId), namespace } }))
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  } finally {
    client.close()
  }
}

/** Deletes the Job (its pods with it, in the background) and the Secret; what is already gone is fine. */
export async function deleteBuildObjects(kc: KubeConfig, namespace: string, buildId: string, timeoutMs: number, which: { job: boolean } = { job: true }): Promise<void> {
  const client = await objectClient(kc, timeoutMs)
  const name = buildObjectName(buildId)
  try {
    if (which.job) {
      try {
        await client.api.delete({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace } }, undefined, undefined, 0, undefined, 'Background')
      } catch (err) {
        if (!isNotFound(err)) throw err
      }
    }
    try {
      await client.api.delete({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } })
    } catch (err) {
      if (!isNotFound(err)) throw err
    }
  } finally {
    client.close()
  }
}
