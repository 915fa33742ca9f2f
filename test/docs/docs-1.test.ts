// The shell blocks of half the documents (the other half: docs-2.test.ts), run against a live service.
import t from 'tap'
import { checkDocuments } from './check.ts'
import { guidesNotLinkedFromReadme, share } from './documents.ts'

// Each document is bounded (90 s, run-document.ts); the file as a whole gets more than tap's default 120 s,
// which a busy machine can reach with several documents each starting a service.
t.setTimeout(300_000)

t.test('the README links to every guide', async (t) => {
  t.same(guidesNotLinkedFromReadme(), [])
})

await checkDocuments(t, share(0))
