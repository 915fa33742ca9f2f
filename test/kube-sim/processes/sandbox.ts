import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ObjectLookup } from '../container-env.ts'
import type { JsonObject, KObject } from '../util.ts'

// The host side of a pod that runs real processes: one temp directory per pod, holding a directory per
// volume (emptyDir shared by every container of the pod, Secret and ConfigMap volumes written out as
// files like the kubelet projects them) and a private root filesystem per container for paths no volume
// covers. Container paths in arguments are mapped to host paths, and host paths in output mapped back,
// so what a process prints reads as it would inside the container.

export class MountError extends Error {}

interface Mount { containerPath: string; hostPath: string }

export class PodSandbox {
  readonly root: string
  private readonly volumeDirs = new Map<string, string>()

  private constructor(root: string) { this.root = root }

  /** Prepares every volume of the pod; a missing Secret or ConfigMap (not optional) is a MountError, as SetUp fails. */
  static create(pod: KObject, lookup: ObjectLookup): PodSandbox {
    const sb = new PodSandbox(mkdtempSync(join(tmpdir(), 'kube-sim-pod-')))
    try {
      for (const v of (pod.spec?.volumes ?? []) as JsonObject[]) sb.prepare(v, lookup)
    } catch (e) {
      sb.dispose()
      throw e
    }
    return sb
  }

  private prepare(v: JsonObject, lookup: ObjectLookup): void {
    const dir = join(this.root, 'volumes', v.name)
    mkdirSync(dir, { recursive: true })
    this.volumeDirs.set(v.name, dir)
    const project = (data: Record<string, Buffer>, items: JsonObject[] | undefined, defaultMode: number | undefined) => {
      const entries = items ? items.map((it) => [it.path as string, data[it.key], it.mode ?? defaultMode] as const) : Object.entries(data).map(([k, b]) => [k, b, defaultMode] as const)
      for (const [path, content, mode] of entries) {
        if (content === undefined) throw new MountError(`MountVolume.SetUp failed for volume "${v.name}" : configmap references non-existent config key: ${path}`)
        const target = join(dir, path)
        mkdirSync(dirname(target), { recursive: true })
        writeFileSync(target, content, { mode: mode ?? 0o644 })
      }
    }
    if (v.secret) {
      const s = lookup.secret(v.secret.secretName)
      if (!s) { if (v.secret.optional) return; throw new MountError(`MountVolume.SetUp failed for volume "${v.name}" : secret "${v.secret.secretName}" not found`) }
      const data = Object.fromEntries(Object.entries((s.data ?? {}) as Record<string, string>).map(([k, b]) => [k, Buffer.from(b, 'base64')]))
      project(data, v.secret.items, v.secret.defaultMode)
    } else if (v.configMap) {
      const cm = lookup.configMap(v.configMap.name)
      if (!cm) { if (v.configMap.optional) return; throw new MountError(`MountVolume.SetUp failed for volume "${v.name}" : configmap "${v.configMap.name}" not found`) }
      const data: Record<string, Buffer> = {}
      for (const [k, s] of Object.entries((cm.data ?? {}) as Record<string, string>)) data[k] = Buffer.from(s)
      for (const [k, b] of Object.entries((cm.binaryData ?? {}) as Record<string, string>)) data[k] = Buffer.from(b, 'base64')
      project(data, v.configMap.items, v.configMap.defaultMode)
    }
  }

  private rootfs(container: string): string {
    const dir = join(this.root, 'rootfs', container)
    for (const d of ['root', 'tmp', 'home']) mkdirSync(join(dir, d), { recursive: true })
    return dir
  }

  private mounts(spec: JsonObject): Mount[] {
    const out: Mount[] = []
    for (const m of (spec.volumeMounts ?? []) as JsonObject[]) {
      const dir = this.volumeDirs.get(m.name)
      if (!dir) continue
      out.push({ containerPath: String(m.mountPath).replace(/\/+$/, '') || '/', hostPath: m.subPath ? join(dir, m.subPath) : dir })
    }
    return out.sort((a, b) => b.containerPath.length - a.containerPath.length)
  }

  /** A path mapper for one container: container path ⇄ host path. */
  forContainer(spec: JsonObject): ContainerPaths {
    const mounts = this.mounts(spec)
    const rootfs = this.rootfs(spec.name)
    const toHost = (p: string): string => {
      for (const m of mounts) if (p === m.containerPath || p.startsWith(`${m.containerPath}/`)) return m.hostPath + p.slice(m.containerPath.length)
      return join(rootfs, p)
    }
    const pairs = [...mounts.map((m) => [m.hostPath, m.containerPath] as const), [rootfs, ''] as const].sort((a, b) => b[0].length - a[0].length)
    const toContainer = (text: string): string => {
      let out = text
      for (const [host, ctr] of pairs) out = out.split(`${host}/`).join(`${ctr}/`).split(host).join(ctr || '/')
      return out
    }
    const workingDir = toHost(spec.workingDir ?? '/')
    mkdirSync(workingDir, { recursive: true })
    return { toHost, toContainer, workingDir }
  }

  dispose(): void { rmSync(this.root, { recursive: true, force: true }) }
}

export interface ContainerPaths {
  toHost(containerPath: string): string
  /** Rewrites host paths inside a text (an output line) to the container's paths. */
  toContainer(text: string): string
  workingDir: string
}
