// The shell blocks of the other half of the documents (see docs-1.test.ts).
import t from 'tap'
import { checkDocuments } from './check.ts'
import { share } from './documents.ts'

await checkDocuments(t, share(1))
