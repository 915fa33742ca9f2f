// Builds (once per source version, cached in the OS temp dir) and runs the Go reference renderer in
// go-ref/main.go: Go's own text/template, for the differential tests.
import { createHash } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface GoCase { template: string; data: unknown }
export interface GoResult { ok: boolean; output: string; error: string }

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'go-ref', 'main.go')

/** Why the Go reference cannot run here, or null when it can. */
export function goUnavailable(): string | null {
  const r = spawnSync('go', ['version'], { encoding: 'utf8' })
  if (r.error || r.status !== 0) return 'the go toolchain is not installed (Debian package golang-go; .ci/run installs it)'
  return null
}

/** Path of the compiled reference program, building it when this version of main.go has no binary yet. */
export function buildReference(): string {
  const source = readFileSync(SOURCE)
  const hash = createHash('sha256').update(source).update(spawnSync('go', ['version'], { encoding: 'utf8' }).stdout).digest('hex').slice(0, 16)
  const dir = join(tmpdir(), `cwo-go-template-ref-${hash}`)
  const bin = join(dir, 'ref')
  if (existsSync(bin)) return bin
  const work = `${dir}.build-${process.pid}`
  mkdirSync(work, { recursive: true })
  try {
    const r = spawnSync('go', ['build', '-o', join(work, 'ref'), SOURCE], {
      encoding: 'utf8',
      cwd: dirname(SOURCE),
      env: { ...process.env, GOCACHE: join(work, 'cache'), GOPATH: join(work, 'gopath'), GO111MODULE: 'off', GOPROXY: 'off', GOFLAGS: '', CGO_ENABLED: '0' },
    })
    if (r.status !== 0) throw new Error(`go build failed: ${r.stderr}`)
    mkdirSync(dir, { recursive: true })
    renameSync(join(work, 'ref'), bin)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return bin
}

export function renderWithGo(bin: string, cases: GoCase[]): GoResult[] {
  const r = spawnSync(bin, [], { input: JSON.stringify(cases), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  if (r.status !== 0) throw new Error(`go reference failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as GoResult[]
}
