// The shell blocks of half the documents (the other half: docs-2.test.ts), run against a live service.
import t from 'tap'
import { checkDocuments } from './check.ts'
import { share } from './documents.ts'

await checkDocuments(t, share(0))
