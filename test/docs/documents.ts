// The documents the docs test checks (README.md and docs/*.md), how they are shared between its two test
// files, and what it checks in each besides running it: the norun rule and the relative links.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { anchors, fencedBlocks, isExternal, links, norunProblems } from './markdown.ts'
import { REPO } from './run-document.ts'

/** README.md first, then docs/*.md by name; paths relative to the repository. */
export function documents(): string[] {
  const docs = existsSync(join(REPO, 'docs')) ? readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`) : []
  return ['README.md', ...docs]
}

// Seconds each document took (script and set-up, measured on the 2-core machine while other tests ran), so
// that tap's two jobs get about the same work; a document not listed counts as 3.
const SECONDS: Record<string, number> = {
  'docs/cli.md': 25, 'README.md': 12, 'docs/lifecycle.md': 8, 'docs/workflows.md': 8, 'docs/import.md': 7,
  'docs/api.md': 5, 'docs/auth.md': 5, 'docs/clusters-and-security.md': 4, 'docs/live-status.md': 3,
}

/** Half `part` (0 or 1) of the documents: the longest first, each to the half with less work so far. */
export function share(part: 0 | 1): string[] {
  const halves: [string[], string[]] = [[], []]
  const load = [0, 0]
  const weight = (d: string) => SECONDS[d] ?? 3
  for (const d of [...documents()].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const i = load[0] <= load[1] ? 0 : 1
    halves[i].push(d)
    load[i] += weight(d)
  }
  return halves[part]
}

/** Every problem with a document's relative links: a missing file, or an anchor the target does not have. */
export function linkProblems(document: string, root = REPO): string[] {
  const path = join(root, document)
  const text = readFileSync(path, 'utf8')
  const problems: string[] = []
  for (const link of links(text)) {
    if (isExternal(link.target)) continue
    const [file, anchor] = splitAnchor(link.target)
    const target = file === '' ? path : resolve(dirname(path), decodeURIComponent(file))
    const shown = `${document}:${link.line}: ${link.target}`
    if (relative(root, target).startsWith('..')) { problems.push(`${shown} leaves the repository`); continue }
    if (!existsSync(target)) { problems.push(`${shown}: ${relative(root, target)} does not exist`); continue }
    if (anchor && target.endsWith('.md') && statSync(target).isFile() && !anchors(readFileSync(target, 'utf8')).has(decodeURIComponent(anchor))) {
      problems.push(`${shown}: ${relative(root, target)} has no heading with the anchor #${anchor}`)
    }
  }
  return problems
}

function splitAnchor(target: string): [string, string | undefined] {
  const i = target.indexOf('#')
  return i < 0 ? [target, undefined] : [target.slice(0, i), target.slice(i + 1)]
}

export function documentNorunProblems(document: string): string[] {
  return norunProblems(document, fencedBlocks(readFileSync(join(REPO, document), 'utf8')))
}

/** The guides (docs/*.md) README.md does not link to: each must be reachable from the front page. */
export function guidesNotLinkedFromReadme(readme = readFileSync(join(REPO, 'README.md'), 'utf8')): string[] {
  const linked = new Set(links(readme)
    .filter((l) => !isExternal(l.target))
    .map((l) => relative(REPO, resolve(REPO, decodeURIComponent(splitAnchor(l.target)[0])))))
  return documents().filter((d) => d !== 'README.md' && !linked.has(d))
}
