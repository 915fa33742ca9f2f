// Independent re-validation of rendered objects: each kind's kubernetes-models class, looked up by
// apiVersion and kind, so a test does not trust the renderer's own validation.
import { Namespace } from 'kubernetes-models/v1/Namespace'
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Secret } from 'kubernetes-models/v1/Secret'
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim'
import { Service } from 'kubernetes-models/v1/Service'
import { Pod } from 'kubernetes-models/v1/Pod'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet'
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet'
import { ReplicaSet } from 'kubernetes-models/apps/v1/ReplicaSet'
import { Job } from 'kubernetes-models/batch/v1/Job'
import { CronJob } from 'kubernetes-models/batch/v1/CronJob'
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace, 'v1/ServiceAccount': ServiceAccount, 'v1/ConfigMap': ConfigMap, 'v1/Secret': Secret,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim, 'v1/Service': Service, 'v1/Pod': Pod,
  'apps/v1/Deployment': Deployment, 'apps/v1/StatefulSet': StatefulSet, 'apps/v1/DaemonSet': DaemonSet, 'apps/v1/ReplicaSet': ReplicaSet,
  'batch/v1/Job': Job, 'batch/v1/CronJob': CronJob, 'networking.k8s.io/v1/Ingress': Ingress, 'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler, 'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
}

/** Throws when the object does not match its kind's Kubernetes schema, or its kind is not a built-in one. */
export function validateObject(object: { apiVersion: string; kind: string }): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`]
  if (!Model) throw new Error(`no model for ${object.apiVersion} ${object.kind}`)
  new Model(structuredClone(object) as never).validate()
}
