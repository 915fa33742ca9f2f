// A tiny POSIX-ish shell for `exec`: enough to run what tests and humans type into a container —
// echo, pwd, cd, ls, env/printenv, hostname, cat, exit N, true/false, export, whoami, uname, mkdir,
// touch, rm, grep, head, tail, wc, sort — with quoting, $VAR/${VAR}/$? expansion, `;`, `&&`, `||`,
// pipes, and `>`/`>>`/`2>&1`/`>&2`.

export interface ShellIo { out(s: string): void; err(s: string): void }

export interface ShellState {
  env: Record<string, string>
  cwd: string
  hostname: string
  /** Regular files by absolute path. */
  files: Map<string, string>
  dirs: Set<string>
}

export class ExitSignal { constructor(readonly code: number) {} }

type Token = { t: 'word'; v: string; raw: boolean } | { t: 'op'; v: string }

function tokenize(line: string, env: Record<string, string>, last: number): Token[] {
  const out: Token[] = []
  let i = 0
  let cur = ''
  let has = false
  const push = () => { if (has) out.push({ t: 'word', v: cur, raw: false }); cur = ''; has = false }
  const expand = (src: string, start: number): [string, number] => {
    let j = start + 1
    if (src[j] === '?') return [String(last), j + 1]
    if (src[j] === '{') { const end = src.indexOf('}', j); const name = src.slice(j + 1, end); return [env[name] ?? '', end + 1] }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(j))
    if (!m) return ['$', j]
    return [env[m[0]] ?? '', j + m[0].length]
  }
  while (i < line.length) {
    const ch = line[i]
    if (ch === ' ' || ch === '\t') { push(); i++; continue }
    if (ch === '#' && !has) break
    if (ch === '\n' || ch === ';') { push(); out.push({ t: 'op', v: ';' }); i++; continue }
    if (line.startsWith('&&', i) || line.startsWith('||', i)) { push(); out.push({ t: 'op', v: line.slice(i, i + 2) }); i += 2; continue }
    if (line.startsWith('2>&1', i)) { push(); out.push({ t: 'op', v: '2>&1' }); i += 4; continue }
    if (line.startsWith('1>&2', i) && !has) { push(); out.push({ t: 'op', v: '>&2' }); i += 4; continue }
    if (line.startsWith('>&2', i)) { push(); out.push({ t: 'op', v: '>&2' }); i += 3; continue }
    if (ch === '|') { push(); out.push({ t: 'op', v: '|' }); i++; continue }
    if (line.startsWith('2>', i) && !has) { push(); out.push({ t: 'op', v: '2>' }); i += 2; continue }
    if (line.startsWith('>>', i)) { push(); out.push({ t: 'op', v: '>>' }); i += 2; continue }
    if (ch === '>') { push(); out.push({ t: 'op', v: '>' }); i++; continue }
    if (ch === "'") { const end = line.indexOf("'", i + 1); cur += line.slice(i + 1, end < 0 ? line.length : end); has = true; i = end < 0 ? line.length : end + 1; continue }
    if (ch === '"') {
      i++
      has = true
      while (i < line.length && line[i] !== '"') {
        if (line[i] === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) { cur += line[i + 1]; i += 2; continue }
        if (line[i] === '$') { const [v, n] = expand(line, i); cur += v; i = n; continue }
        cur += line[i++]
      }
      i++
      continue
    }
    if (ch === '\\' && i + 1 < line.length) { cur += line[i + 1]; has = true; i += 2; continue }
    if (ch === '$') { const [v, n] = expand(line, i); cur += v; has = true; i = n; continue }
    cur += ch
    has = true
    i++
  }
  push()
  return out
}

/** Splits a script at `;`, newlines, `&&` and `||` outside quotes; `after` is the separator before each part. */
function splitCommands(script: string): { text: string; after: ';' | '&&' | '||' }[] {
  const out: { text: string; after: ';' | '&&' | '||' }[] = []
  let cur = ''
  let after: ';' | '&&' | '||' = ';'
  let quote: string | undefined
  for (let i = 0; i < script.length; i++) {
    const ch = script[i]
    if (quote) { cur += ch; if (ch === '\\' && quote === '"' && i + 1 < script.length) { cur += script[++i]; continue } if (ch === quote) quote = undefined; continue }
    if (ch === "'" || ch === '"') { quote = ch; cur += ch; continue }
    if (ch === '\\' && i + 1 < script.length) { cur += ch + script[++i]; continue }
    const two = script.slice(i, i + 2)
    if (ch === ';' || ch === '\n' || two === '&&' || two === '||') {
      out.push({ text: cur, after })
      cur = ''
      after = two === '&&' || two === '||' ? two : ';'
      if (two === '&&' || two === '||') i++
      continue
    }
    cur += ch
  }
  out.push({ text: cur, after })
  return out
}

function lines(text: string): string[] {
  const l = text.split('\n')
  if (l.length && l[l.length - 1] === '') l.pop()
  return l
}

function resolvePath(cwd: string, p: string): string {
  const parts = (p.startsWith('/') ? p : `${cwd}/${p}`).split('/')
  const out: string[] = []
  for (const s of parts) {
    if (!s || s === '.') continue
    if (s === '..') out.pop()
    else out.push(s)
  }
  return '/' + out.join('/')
}

export class Shell {
  last = 0

  constructor(readonly s: ShellState) {}

  private isDir(p: string): boolean {
    if (p === '/' || this.s.dirs.has(p)) return true
    for (const f of this.s.files.keys()) if (f.startsWith(p + '/')) return true
    for (const d of this.s.dirs) if (d.startsWith(p + '/')) return true
    return false
  }

  /** Runs a script (one or more lines). Throws ExitSignal when the script calls `exit`. */
  run(script: string, io: ShellIo, stdin?: string): number {
    // Each command is expanded only when it runs, so `$?` and `export` earlier in the script are seen.
    for (const seg of splitCommands(script)) {
      if (seg.after === '&&' && this.last !== 0) continue
      if (seg.after === '||' && this.last === 0) continue
      const toks = tokenize(seg.text, this.s.env, this.last)
      if (toks.some((t) => t.t === 'word')) this.last = this.pipeline(toks, io, stdin)
    }
    return this.last
  }

  /** `a | b | c`: each stage's stdout is the next one's stdin; the last stage's status wins. */
  private pipeline(toks: Token[], io: ShellIo, stdin?: string): number {
    const stages: Token[][] = [[]]
    for (const t of toks) {
      if (t.t === 'op' && t.v === '|') stages.push([])
      else stages[stages.length - 1].push(t)
    }
    let input = stdin
    let rc = 0
    stages.forEach((st, i) => {
      if (i === stages.length - 1) { rc = this.exec(st, io, input); return }
      let captured = ''
      rc = this.exec(st, { out: (x) => { captured += x }, err: io.err }, input)
      input = captured
    })
    return rc
  }

  private exec(toks: Token[], io: ShellIo, stdin?: string): number {
    let outFile: { path: string; append: boolean } | undefined
    let errToOut = false
    let errNull = false
    let outToErr = false
    const words: string[] = []
    for (let i = 0; i < toks.length; i++) {
      const t = toks[i]
      if (t.t === 'op') {
        const next = toks[i + 1]
        if ((t.v === '>' || t.v === '>>') && next?.t === 'word') { outFile = { path: resolvePath(this.s.cwd, next.v), append: t.v === '>>' }; i++ } else if (t.v === '2>' && next?.t === 'word') { errNull = next.v === '/dev/null'; i++ } else if (t.v === '2>&1') errToOut = true
        else if (t.v === '>&2') outToErr = true
        continue
      }
      words.push(t.v)
    }
    // Leading NAME=value words are assignments (for the shell when alone, else for the command).
    const assigns: [string, string][] = []
    while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) {
      const w = words.shift()!
      const eq = w.indexOf('=')
      assigns.push([w.slice(0, eq), w.slice(eq + 1)])
    }
    if (!words.length) { for (const [k, v] of assigns) this.s.env[k] = v; return 0 }
    let captured = ''
    const toNull = outFile?.path === '/dev/null'
    const sink: ShellIo = {
      out: (x) => { if (toNull) return; if (outToErr) io.err(x); else if (outFile) captured += x; else io.out(x) },
      err: (x) => { if (errNull) return; if (errToOut) sink.out(x); else io.err(x) },
    }
    const saved = { ...this.s.env }
    for (const [k, v] of assigns) this.s.env[k] = v
    try {
      return this.builtin(words, sink, stdin)
    } finally {
      if (assigns.length) this.s.env = Object.assign(this.s.env, saved)
      if (outFile && !toNull) {
        const prev = outFile.append ? this.s.files.get(outFile.path) ?? '' : ''
        this.s.files.set(outFile.path, prev + captured)
      }
    }
  }

  private builtin(argv: string[], io: ShellIo, stdin?: string): number {
    const [cmd, ...args] = argv
    const name = cmd.split('/').pop()!
    switch (name) {
      case 'echo': {
        let nl = true
        let a = args
        if (a[0] === '-n') { nl = false; a = a.slice(1) }
        io.out(a.join(' ') + (nl ? '\n' : ''))
        return 0
      }
      case 'printf': io.out((args[0] ?? '').replace(/\\n/g, '\n').replace(/%s/g, () => args.splice(1, 1)[0] ?? '')); return 0
      case 'pwd': io.out(this.s.cwd + '\n'); return 0
      case 'cd': {
        const target = resolvePath(this.s.cwd, args[0] ?? this.s.env.HOME ?? '/')
        if (!this.isDir(target)) { io.err(`sh: cd: can't cd to ${args[0]}: No such file or directory\n`); return 2 }
        this.s.cwd = target
        this.s.env.PWD = target
        return 0
      }
      case 'ls': return this.ls(args, io)
      case 'env': case 'printenv': {
        if (name === 'printenv' && args.length) {
          const v = this.s.env[args[0]]
          if (v === undefined) return 1
          io.out(v + '\n')
          return 0
        }
        for (const [k, v] of Object.entries(this.s.env)) io.out(`${k}=${v}\n`)
        return 0
      }
      case 'hostname': io.out(this.s.hostname + '\n'); return 0
      case 'whoami': io.out('root\n'); return 0
      case 'id': io.out('uid=0(root) gid=0(root) groups=0(root)\n'); return 0
      case 'uname': io.out(args.includes('-a') ? `Linux ${this.s.hostname} 6.1.0-kube-sim #1 SMP x86_64 GNU/Linux\n` : 'Linux\n'); return 0
      case 'date': io.out(new Date().toUTCString() + '\n'); return 0
      case 'true': case ':': return 0
      case 'false': return 1
      case 'sleep': return 0
      case 'export': for (const a of args) { const eq = a.indexOf('='); if (eq > 0) this.s.env[a.slice(0, eq)] = a.slice(eq + 1) } return 0
      case 'unset': for (const a of args) delete this.s.env[a]; return 0
      case 'exit': throw new ExitSignal(args.length ? Number(args[0]) & 255 : this.last)
      case 'cat': {
        if (!args.length) { io.out(stdin ?? ''); return 0 }
        let rc = 0
        for (const a of args) {
          const p = resolvePath(this.s.cwd, a)
          const f = this.s.files.get(p)
          if (f !== undefined) io.out(f)
          else if (this.isDir(p)) { io.err(`cat: read error: Is a directory\n`); rc = 1 } else { io.err(`cat: can't open '${a}': No such file or directory\n`); rc = 1 }
        }
        return rc
      }
      case 'grep': {
        const flags = args.filter((a) => /^-[a-z]+$/.test(a)).join('')
        const [pattern, ...files] = args.filter((a) => !/^-[a-z]+$/.test(a))
        if (pattern === undefined) { io.err('Usage: grep [-vic] PATTERN [FILE]...\n'); return 2 }
        const text = files.length ? files.map((f) => this.s.files.get(resolvePath(this.s.cwd, f)) ?? '').join('') : stdin ?? ''
        let re: RegExp
        try { re = new RegExp(pattern, flags.includes('i') ? 'i' : '') } catch { re = new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) }
        const hits = lines(text).filter((l) => re.test(l) !== flags.includes('v'))
        if (flags.includes('c')) io.out(`${hits.length}\n`)
        else for (const h of hits) io.out(h + '\n')
        return hits.length ? 0 : 1
      }
      case 'head': case 'tail': {
        const nArg = args.find((a) => /^-n?\d+$/.test(a)) ?? (args.includes('-n') ? `-${args[args.indexOf('-n') + 1]}` : '-10')
        const n = Number(nArg.replace(/^-n?/, ''))
        const files = args.filter((a, i) => !a.startsWith('-') && args[i - 1] !== '-n')
        const all = lines(files.length ? this.s.files.get(resolvePath(this.s.cwd, files[0])) ?? '' : stdin ?? '')
        for (const l of name === 'head' ? all.slice(0, n) : all.slice(Math.max(0, all.length - n))) io.out(l + '\n')
        return 0
      }
      case 'wc': {
        const text = stdin ?? ''
        if (args.includes('-l')) io.out(`${lines(text).length}\n`)
        else io.out(`${lines(text).length} ${text.split(/\s+/).filter(Boolean).length} ${Buffer.byteLength(text)}\n`)
        return 0
      }
      case 'sort': { const l = lines(stdin ?? '').sort(); if (args.includes('-r')) l.reverse(); for (const x of l) io.out(x + '\n'); return 0 }
      case 'mkdir': for (const a of args.filter((x) => !x.startsWith('-'))) this.s.dirs.add(resolvePath(this.s.cwd, a)); return 0
      case 'touch': for (const a of args) { const p = resolvePath(this.s.cwd, a); if (!this.s.files.has(p)) this.s.files.set(p, '') } return 0
      case 'rm': {
        let rc = 0
        for (const a of args.filter((x) => !x.startsWith('-'))) {
          const p = resolvePath(this.s.cwd, a)
          if (this.s.files.delete(p)) continue
          if (args.some((x) => /^-\w*r/.test(x)) && this.isDir(p)) {
            for (const f of [...this.s.files.keys()]) if (f.startsWith(p + '/')) this.s.files.delete(f)
            for (const d of [...this.s.dirs]) if (d === p || d.startsWith(p + '/')) this.s.dirs.delete(d)
            continue
          }
          if (!args.includes('-f')) { io.err(`rm: can't remove '${a}': No such file or directory\n`); rc = 1 }
        }
        return rc
      }
      case 'sh': case 'bash': case 'ash': {
        if (args[0] === '-c' && args[1] !== undefined) {
          const sub = new Shell(this.s)
          sub.last = this.last
          try { return sub.run(args[1], io, stdin) } catch (e) { if (e instanceof ExitSignal) return e.code; throw e }
        }
        return 0
      }
      default:
        io.err(`sh: ${cmd}: not found\n`)
        return 127
    }
  }

  private ls(args: string[], io: ShellIo): number {
    const flags = args.filter((a) => a.startsWith('-')).join('')
    const targets = args.filter((a) => !a.startsWith('-'))
    const all = flags.includes('a')
    let rc = 0
    const list = targets.length ? targets : ['.']
    for (const t of list) {
      const p = resolvePath(this.s.cwd, t)
      if (this.s.files.has(p)) { io.out(`${t}\n`); continue }
      if (!this.isDir(p)) { io.err(`ls: ${t}: No such file or directory\n`); rc = 1; continue }
      const prefix = p === '/' ? '/' : p + '/'
      const names = new Set<string>()
      for (const f of [...this.s.files.keys(), ...this.s.dirs]) if (f.startsWith(prefix) && f !== p) names.add(f.slice(prefix.length).split('/')[0])
      if (list.length > 1) io.out(`${t}:\n`)
      const sorted = [...names].filter((n) => all || !n.startsWith('.')).sort()
      if (flags.includes('l')) {
        for (const n of sorted) {
          const full = prefix + n
          const dir = this.isDir(full) && !this.s.files.has(full)
          io.out(`${dir ? 'drwxr-xr-x' : '-rw-r--r--'}    1 root     root     ${String(dir ? 4096 : Buffer.byteLength(this.s.files.get(full) ?? '')).padStart(8)} Jan  1 00:00 ${n}\n`)
        }
      } else if (sorted.length) io.out(sorted.join('\n') + '\n')
    }
    return rc
  }
}
