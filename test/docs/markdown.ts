// What the docs test reads in a Markdown document: its fenced code blocks (which shell blocks run, which
// are exempt and why) and its relative links with their anchors. Only the few CommonMark rules these need
// are implemented: fences (``` or ~~~, closed by the same character at least as long, indented as in list
// items), ATX headings and GitHub's heading anchors, inline links and reference definitions.

export interface FencedBlock {
  /** The info string's words: `sh norun` → ['sh', 'norun']. */
  words: string[]
  /** 1-based line of the opening fence. */
  line: number
  /** The block's lines, the fence's indentation removed. */
  body: string[]
}

export type ShellBlockKind = 'run' | 'norun' | 'illustration'

const SHELLS = new Set(['sh', 'bash', 'shell'])
export const NORUN_REASON = /^# not run by the docs test: \S/

export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split(/\r?\n/)
  const blocks: FencedBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i])
    if (!open) continue
    const [, indent, fence, info] = open
    // A backtick fence's info string cannot hold a backtick (that is inline code, not a fence).
    if (fence[0] === '`' && info.includes('`')) continue
    const close = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`)
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length && !close.test(lines[j]); j++) body.push(stripIndent(lines[j], indent.length))
    blocks.push({ words: info.trim().split(/\s+/).filter(Boolean), line: i + 1, body })
    i = j
  }
  return blocks
}

function stripIndent(line: string, n: number): string {
  let k = 0
  while (k < n && k < line.length && (line[k] === ' ' || line[k] === '\t')) k++
  return line.slice(k)
}

export function kindOf(block: FencedBlock): ShellBlockKind {
  if (!SHELLS.has((block.words[0] ?? '').toLowerCase())) return 'illustration'
  return block.words[1] === 'norun' ? 'norun' : 'run'
}

/** A `norun` block must say on its first line why it is not run: one problem per offending block. */
export function norunProblems(document: string, blocks: FencedBlock[]): string[] {
  return blocks
    .filter((b) => kindOf(b) === 'norun' && !NORUN_REASON.test(b.body[0] ?? ''))
    .map((b) => `${document}:${b.line}: a norun block must start with "# not run by the docs test: <reason>" (found ${JSON.stringify(b.body[0] ?? '')})`)
}

/** The lines outside fenced blocks, with their 1-based numbers (links and headings live there). */
export function proseLines(text: string): Array<{ line: number; text: string }> {
  const lines = text.split(/\r?\n/)
  const inBlock = new Set<number>()
  for (const b of fencedBlocks(text)) for (let k = b.line - 1; k <= b.line + b.body.length; k++) inBlock.add(k)
  return lines.flatMap((l, i) => inBlock.has(i) ? [] : [{ line: i + 1, text: l }])
}

export interface Link { line: number; target: string }

/** Inline links and images `[x](target)`, and reference definitions `[x]: target`; inline code is not prose. */
export function links(text: string): Link[] {
  const found: Link[] = []
  for (const { line, text: l } of proseLines(text)) {
    const prose = l.replace(/(`+)[^`]*?\1/g, '')
    for (const m of prose.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+["'(][^)]*)?\)/g)) found.push({ line, target: m[1].replace(/^<|>$/g, '') })
    const def = /^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(prose)
    if (def) found.push({ line, target: def[1].replace(/^<|>$/g, '') })
  }
  return found
}

/** True for links leaving the repository (a scheme such as https: or mailto:, or //host). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')
}

/** The anchors GitHub gives a document: one per ATX heading (repeats numbered -1, -2…), plus explicit ids. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const { text: l } of proseLines(text)) {
    for (const m of l.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) result.add(m[1])
    const h = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(l)
    if (!h) continue
    const base = slug(h[1])
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    result.add(n === 0 ? base : `${base}-${n}`)
  }
  return result
}

/** GitHub's heading slug: the rendered text, lower-cased, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  // Code spans keep their text as written; emphasis markers outside them are not text.
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .split(/(`+[^`]*?`+)/)
    .map((part) => part.startsWith('`') ? part.replace(/^`+|`+$/g, '') : part.replace(/<[^>]+>/g, '').replace(/\*+/g, '').replace(/(^|\s)_+|_+(?=\s|$)/g, '$1'))
    .join('')
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-')
}
