// One test per document: the norun rule, the relative links, then its shell blocks, run in order.
import type { Test } from 'tap'
import { join } from 'node:path'
import { documentNorunProblems, linkProblems } from './documents.ts'
import { REPO, runDocument } from './run-document.ts'

export async function checkDocuments(t: Test, docs: string[]): Promise<void> {
  for (const doc of docs) {
    await t.test(doc, async (t) => {
      t.same(documentNorunProblems(doc), [], 'every norun block says why it is not run')
      t.same(linkProblems(doc), [], 'every relative link points to a file (and heading) that exists')
      const run = await runDocument(t, join(REPO, doc))
      t.ok(run.ok, run.report)
      t.comment(run.report)
    })
  }
}
