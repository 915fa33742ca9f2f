import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { DockerfileError, normalizeImage, parseDockerfile, type Instruction } from './dockerfile.ts'
import type { RunContext } from './engine.ts'
import { buildImage } from './image.ts'
import { PushError, pushImage, type Login } from './registry-push.ts'

// A container of the builder image (moby/buildkit, `buildctl-daemonless.sh build ...`): reads the
// Dockerfile and context from the pod's volumes, prints BuildKit's plain progress, and pushes a small real
// image (see image.ts) to the registry of `--output name=`, logging in with the mounted docker config.
// Nothing is executed from the Dockerfile: RUN steps succeed unless the test marked the image to fail.

interface BuildArgs { locals: Record<string, string>; opts: Record<string, string>; output: Record<string, string> }

const VALUE_FLAGS = new Set(['--progress', '--frontend', '--local', '--opt', '--output', '-o', '--export-cache', '--import-cache', '--secret', '--ssh', '--metadata-file', '--trace', '--ref-file', '--allow'])

function parseArgs(argv: string[]): BuildArgs | string {
  if (argv[0] !== 'build' && argv[0] !== 'b') return `No help topic for '${argv[0] ?? ''}'`
  const a: BuildArgs = { locals: {}, opts: {}, output: {} }
  for (let i = 1; i < argv.length; i++) {
    let flag = argv[i]
    let value: string | undefined
    const eq = flag.indexOf('=')
    if (flag.startsWith('-') && eq > 0) { value = flag.slice(eq + 1); flag = flag.slice(0, eq) }
    if (flag === '--no-cache' || flag === '--debug') continue
    if (!VALUE_FLAGS.has(flag)) return `flag provided but not defined: ${flag}`
    value ??= argv[++i]
    if (value === undefined) return `flag needs an argument: ${flag}`
    const kv = (s: string) => { const j = s.indexOf('='); return j < 0 ? [s, ''] : [s.slice(0, j), s.slice(j + 1)] }
    if (flag === '--local') { const [k, v] = kv(value); a.locals[k] = v }
    if (flag === '--opt') { const [k, v] = kv(value); a.opts[k] = v }
    if (flag === '--output' || flag === '-o') for (const part of value.split(',')) { const [k, v] = kv(part); a.output[k] = v }
  }
  return a
}

/** `127.0.0.1:5000/team/app:v1` → host, repository name, tag (docker.io rules for a host-less name). */
function parseRef(ref: string): { host: string; name: string; tag: string } {
  const slash = ref.indexOf('/')
  const first = slash > 0 ? ref.slice(0, slash) : ''
  const hasHost = first !== '' && (/[.:]/.test(first) || first === 'localhost')
  const host = hasHost ? first : 'docker.io'
  let rest = hasHost ? ref.slice(slash + 1) : ref
  let tag = 'latest'
  const colon = rest.lastIndexOf(':')
  if (colon > rest.lastIndexOf('/')) { tag = rest.slice(colon + 1); rest = rest.slice(0, colon) }
  if (host === 'docker.io' && !rest.includes('/')) rest = `library/${rest}`
  return { host, name: rest, tag }
}

function loginFor(host: string, configDir: string): Login | undefined {
  const file = join(configDir, 'config.json')
  if (!existsSync(file)) return undefined
  let doc: { auths?: Record<string, { auth?: string; username?: string; password?: string }> }
  try { doc = JSON.parse(readFileSync(file, 'utf8')) } catch { return undefined }
  for (const [key, entry] of Object.entries(doc.auths ?? {})) {
    const k = key.replace(/^https?:\/\//, '').replace(/\/.*$/, '')
    if (k !== host && !(host === 'docker.io' && k === 'index.docker.io')) continue
    if (entry.auth) {
      const text = Buffer.from(entry.auth, 'base64').toString('utf8')
      const i = text.indexOf(':')
      if (i > 0) return { username: text.slice(0, i), password: text.slice(i + 1) }
    }
    if (entry.username) return { username: entry.username, password: entry.password ?? '' }
  }
  return undefined
}

function contextFiles(dir: string): Array<{ path: string; digest: string; size: number }> {
  const out: Array<{ path: string; digest: string; size: number }> = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((x, y) => x.name.localeCompare(y.name))) {
      const p = join(d, e.name)
      if (e.isDirectory()) { if (e.name !== '.git') walk(p) } else if (e.isFile()) {
        const data = readFileSync(p)
        out.push({ path: relative(dir, p), digest: createHash('sha256').update(data).digest('hex'), size: data.length })
      }
    }
  }
  walk(dir)
  return out
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`

function cmdOf(instructions: Instruction[]): string[] | undefined {
  const cmd = [...instructions].reverse().find((i) => i.keyword === 'CMD')
  if (!cmd) return undefined
  try { const v = JSON.parse(cmd.args); if (Array.isArray(v)) return v.map(String) } catch { /* shell form */ }
  return ['/bin/sh', '-c', cmd.args]
}

export async function runBuildkit(ctx: RunContext): Promise<number> {
  const out = (s: string) => ctx.out.line(s)
  const command = (ctx.spec.command ?? []) as string[]
  if (!command.length || !/buildctl(-daemonless\.sh)?$/.test(command[0])) {
    // The image's own entrypoint is the daemon: it serves until it is stopped.
    out('time="1970-01-01T00:00:00Z" level=info msg="running server on /run/user/1000/buildkit/buildkitd.sock"')
    await new Promise<void>((resolve) => { if (ctx.signal.aborted) resolve(); else ctx.signal.addEventListener('abort', () => resolve(), { once: true }) })
    return 137
  }
  const args = parseArgs([...command.slice(1), ...((ctx.spec.args ?? []) as string[])])
  if (typeof args === 'string') { out(`error: ${args}`); return 1 }
  const fail = (msg: string) => { out(''); out(`ERROR: failed to solve: ${msg}`); return 1 }
  let step = 1
  const filename = args.opts.filename ?? 'Dockerfile'
  const dockerfileDir = args.locals.dockerfile ?? args.locals.context
  const contextDir = args.locals.context
  if (!dockerfileDir || !contextDir) { out('error: failed to solve: no local sources enabled'); return 1 }
  const buildArgs = Object.fromEntries(Object.entries(args.opts).filter(([k]) => k.startsWith('build-arg:')).map(([k, v]) => [k.slice('build-arg:'.length), v]))

  out(`#${step} [internal] load build definition from ${filename}`)
  const dfPath = join(ctx.paths.toHost(dockerfileDir), filename)
  const text = existsSync(dfPath) && statSync(dfPath).isFile() ? readFileSync(dfPath, 'utf8') : undefined
  out(`#${step} transferring dockerfile: ${text === undefined ? 2 : Buffer.byteLength(text)}B done`)
  out(`#${step} DONE 0.0s`)
  if (text === undefined) return fail(`failed to read dockerfile: open ${filename}: no such file or directory`)
  let parsed: ReturnType<typeof parseDockerfile>
  try { parsed = parseDockerfile(text) } catch (e) {
    if (e instanceof DockerfileError) return fail(e.message)
    throw e
  }
  const stageNames = new Set(parsed.stages.map((s) => s.name?.toLowerCase()).filter(Boolean))
  const bases = [...new Set(parsed.stages.map((s) => s.base).filter((b) => b !== 'scratch' && !stageNames.has(b.toLowerCase())))]
  for (const b of bases) {
    out(''); step++
    out(`#${step} [internal] load metadata for ${normalizeImage(b)}`)
    out(`#${step} DONE 0.1s`)
  }
  out(''); step++
  out(`#${step} [internal] load .dockerignore`)
  out(`#${step} transferring context: 2B done`)
  out(`#${step} DONE 0.0s`)

  const ctxHost = ctx.paths.toHost(contextDir)
  if (!existsSync(ctxHost) || !statSync(ctxHost).isDirectory()) return fail(`failed to get status: stat ${contextDir}: no such file or directory`)
  const files = contextFiles(ctxHost)
  out(''); step++
  out(`#${step} [internal] load build context`)
  out(`#${step} transferring context: ${files.reduce((n, f) => n + f.size, 0)}B done`)
  out(`#${step} DONE 0.0s`)

  const multi = parsed.stages.length > 1
  const markedFailure = ctx.failure()
  const allSteps = parsed.stages.flatMap((s) => s.steps.map((ins, i) => ({ ins, label: `[${multi && s.name ? `${s.name} ` : ''}${i + 1}/${s.steps.length}]` })))
  const lastRun = [...allSteps].reverse().find((s) => s.ins.keyword === 'RUN') ?? allSteps[allSteps.length - 1]
  let entered = false
  for (const s of allSteps) {
    out(''); step++
    const started = Date.now()
    if (s.ins.keyword === 'FROM') {
      const base = parsed.stages.find((st) => st.steps[0] === s.ins)!.base
      if (base === 'scratch' || stageNames.has(base.toLowerCase())) { out(`#${step} ${s.label} FROM ${base}`); out(`#${step} DONE 0.0s`); continue }
      const ref = normalizeImage(base)
      out(`#${step} ${s.label} FROM ${ref}@sha256:${createHash('sha256').update(ref).digest('hex')}`)
      out(`#${step} resolve ${ref} done`)
      out(`#${step} DONE 0.0s`)
      continue
    }
    out(`#${step} ${s.label} ${s.ins.keyword} ${s.ins.args}`)
    if (!entered) {
      entered = true
      await ctx.enter('build')
      if (ctx.signal.aborted) return 137
    }
    if ((s.ins.keyword === 'COPY' || s.ins.keyword === 'ADD') && !/--from=/.test(s.ins.args)) {
      const words = s.ins.args.split(/\s+/).filter((w) => !w.startsWith('--'))
      for (const src of words.slice(0, -1)) {
        if (/^https?:\/\//.test(src) || /[*?[]/.test(src) || src.startsWith('[')) continue
        const p = join(ctxHost, src)
        if (!existsSync(p)) {
          out(`#${step} ERROR: failed to calculate checksum of ref kube-sim::kube-sim: "/${src.replace(/^\.?\//, '')}": not found`)
          out('------'); out(` > ${s.label} ${s.ins.keyword} ${s.ins.args}:`); out('------')
          return fail(`failed to compute cache key: failed to calculate checksum of ref kube-sim::kube-sim: "/${src.replace(/^\.?\//, '')}": not found`)
        }
      }
    }
    if (markedFailure === 'build' && s === lastRun) {
      const cmd = s.ins.keyword === 'RUN' ? s.ins.args : 'make'
      const t = secs(Date.now() - started).replace('s', '')
      out(`#${step} ${t}00 make: *** No rule to make target 'all'.  Stop.`)
      out(`#${step} ERROR: process "/bin/sh -c ${cmd}" did not complete successfully: exit code: 2`)
      out('------'); out(` > ${s.label} ${s.ins.keyword} ${s.ins.args}:`); out(`${t}00 make: *** No rule to make target 'all'.  Stop.`); out('------')
      return fail(`process "/bin/sh -c ${cmd}" did not complete successfully: exit code: 2`)
    }
    out(`#${step} DONE ${secs(Date.now() - started)}`)
  }
  if (!entered) { await ctx.enter('build'); if (ctx.signal.aborted) return 137 }

  const ref = args.output.name
  const push = args.output.push === 'true' || args.output.type === 'registry'
  const image = buildImage({ dockerfile: text, buildArgs, contextFiles: files.map(({ path, digest }) => ({ path, digest })), cmd: cmdOf(parsed.instructions), oci: args.output['oci-mediatypes'] === 'true' })
  out(''); step++
  const exportStarted = Date.now()
  out(`#${step} exporting to image`)
  out(`#${step} exporting layers done`)
  out(`#${step} exporting manifest ${image.manifest.digest} done`)
  out(`#${step} exporting config ${image.config.digest} done`)
  if (ref) out(`#${step} naming to ${ref} done`)
  if (push) {
    if (!ref) return fail('exporter option "name" is required when push=true')
    out(`#${step} pushing layers`)
    await ctx.enter('push')
    if (ctx.signal.aborted) return 137
    const target = parseRef(ref)
    const pushFailed = (msg: string) => {
      out(`#${step} ERROR: failed to push ${ref}: ${msg}`)
      out('------'); out(' > exporting to image:'); out('------')
      return fail(`failed to push ${ref}: ${msg}`)
    }
    if (ctx.failure() === 'push') return pushFailed(`unexpected status from PUT request to http://${target.host}/v2/${target.name}/blobs/uploads/: 500 Internal Server Error`)
    const dockerConfig = ctx.paths.toHost(ctx.env.DOCKER_CONFIG ?? `${ctx.env.HOME ?? '/root'}/.docker`)
    try {
      await pushImage({ ...target, insecure: args.output['registry.insecure'] === 'true' }, image, loginFor(target.host, dockerConfig), ctx.signal)
    } catch (e) {
      if (ctx.signal.aborted) return 137
      if (e instanceof PushError) return pushFailed(e.message)
      throw e
    }
    out(`#${step} pushing layers ${secs(Date.now() - exportStarted)} done`)
    out(`#${step} pushing manifest for ${ref}@${image.manifest.digest}`)
    out(`#${step} pushing manifest for ${ref}@${image.manifest.digest} 0.0s done`)
  }
  out(`#${step} DONE ${secs(Date.now() - exportStarted)}`)
  return 0
}
