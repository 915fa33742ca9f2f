// The client's types (src/cli/api/openapi.ts) are what openapi-typescript generates from the committed
// openapi.yaml, so `cwo` cannot ask for a path, parameter or body the API does not have. (That openapi.yaml
// is what the routes describe is test/app/openapi.test.ts's concern; `npm run openapi` rewrites both.)
import { readFile } from 'node:fs/promises'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import { cliTypesHeader } from '../../src/cli/api/header.ts'

t.test('src/cli/api/openapi.ts is generated from openapi.yaml as committed', async (t) => {
  const [yaml, committed] = await Promise.all([
    readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8'),
    readFile(new URL('../../src/cli/api/openapi.ts', import.meta.url), 'utf8'),
  ])
  const generated = cliTypesHeader + astToString(await openapiTS(yaml))
  // One line named, not a 12,000-line diff: where it starts to differ.
  if (generated !== committed) {
    const a = generated.split('\n')
    const b = committed.split('\n')
    let i = 0
    while (a[i] === b[i]) i++
    t.fail(`src/cli/api/openapi.ts is stale (run npm run openapi): line ${i + 1} is ${JSON.stringify(b[i])}, generated ${JSON.stringify(a[i])}`)
  } else t.pass('current')
  t.ok(committed.startsWith(cliTypesHeader), 'with the header saying it is generated')
})
