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

// The documents with the longest scripts (the tour, every cwo command) are shared out first, so that tap's
// two jobs get about the same work; the rest alternate.
const HEAVY = new Set(['README.md', 'docs/cli.md'])

/** Half `part` (0 or 1) of the documents: heavy ones alternate, and so do the others. */
export function share(part: 0 | 1): string[] {
  const all = documents()
  const pick = (list: string[]) => list.filter((_, i) => i % 2 === part)
  return [...pick(all.filter((d) => HEAVY.has(d))), ...pick(all.filter((d) => !HEAVY.has(d)))]
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
