// Just enough of the Dockerfile syntax to lay out a build the way BuildKit reports it: instructions with
// their line numbers (continuations and comments handled), stages, and the steps that show up in progress.

export interface Instruction { line: number; keyword: string; args: string }
export interface Stage { name?: string; base: string; steps: Instruction[] }

const KNOWN = new Set(['FROM', 'RUN', 'CMD', 'LABEL', 'MAINTAINER', 'EXPOSE', 'ENV', 'ADD', 'COPY', 'ENTRYPOINT', 'VOLUME', 'USER', 'WORKDIR', 'ARG', 'ONBUILD', 'STOPSIGNAL', 'HEALTHCHECK', 'SHELL'])
/** Instructions that become a numbered step (`[2/3] RUN make`); the others only change the image config. */
const STEPS = new Set(['FROM', 'RUN', 'COPY', 'ADD', 'WORKDIR'])

export class DockerfileError extends Error {}

export function parseDockerfile(text: string): { stages: Stage[]; instructions: Instruction[] } {
  const instructions: Instruction[] = []
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i]
    if (/^\s*(#.*)?$/.test(l)) continue
    const start = i + 1
    while (/\\\s*$/.test(l) && i + 1 < lines.length) {
      i++
      if (/^\s*#/.test(lines[i])) continue
      l = `${l.replace(/\\\s*$/, '')} ${lines[i].trim()}`
    }
    const m = /^\s*(\S+)\s*(.*)$/.exec(l)!
    const keyword = m[1].toUpperCase()
    if (!KNOWN.has(keyword)) throw new DockerfileError(`dockerfile parse error on line ${start}: unknown instruction: ${m[1]}`)
    instructions.push({ line: start, keyword, args: m[2].trim() })
  }
  if (!instructions.length) throw new DockerfileError('the Dockerfile cannot be empty')
  const stages: Stage[] = []
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(ins.args)
      if (!m) throw new DockerfileError(`dockerfile parse error on line ${ins.line}: FROM requires either one or three arguments`)
      stages.push({ base: m[1], name: m[2], steps: [ins] })
      continue
    }
    if (!stages.length) {
      if (ins.keyword === 'ARG') continue
      throw new DockerfileError(`dockerfile parse error on line ${ins.line}: no build stage in current context`)
    }
    if (STEPS.has(ins.keyword)) stages[stages.length - 1].steps.push(ins)
  }
  return { stages, instructions }
}

/** `alpine:3.20` → `docker.io/library/alpine:3.20`, as BuildKit names a base image. */
export function normalizeImage(ref: string): string {
  let name = ref
  const first = name.split('/')[0]
  if (!name.includes('/') || !(/[.:]/.test(first) || first === 'localhost')) name = `docker.io/${name.includes('/') ? '' : 'library/'}${name}`
  const lastSlash = name.lastIndexOf('/')
  if (!name.includes('@') && !name.slice(lastSlash).includes(':')) name += ':latest'
  return name
}
