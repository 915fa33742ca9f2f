// A WORKFLOW argument: its id, or its name (exact; the caller's own workflows only, as every read is).
import { ok } from './client.ts'
import { CliError } from './errors.ts'
import type { Session } from './session.ts'

const OBJECT_ID = /^[0-9a-f]{24}$/i
const PAGE = 100

/**
 * The id of the caller's one workflow named exactly `name`, or null when none is. Names are not unique in
 * the API: several of that name is an error listing their ids. `search` matches substrings, so every page
 * of matches is read (a name may be a part of many others).
 */
export async function findWorkflowByName(s: Session, name: string): Promise<string | null> {
  const exact: string[] = []
  for (let page = 1; ; page++) {
    const answer = await ok(s.server, s.client.GET('/v1/api/workflows', { params: { query: { search: name, limit: PAGE, page, sort: 'name', order: 'asc' } } }))
    for (const w of answer.workflows) if (w.name === name) exact.push(w.id)
    if (page * PAGE >= answer.total || answer.workflows.length === 0) break
  }
  if (exact.length > 1) throw new CliError(`${exact.length} workflows are named ${JSON.stringify(name)}: use the id (${exact.join(', ')})`)
  return exact[0] ?? null
}

export async function resolveWorkflowId(s: Session, ref: string): Promise<string> {
  if (OBJECT_ID.test(ref)) return ref
  const id = await findWorkflowByName(s, ref)
  if (id === null) throw new CliError(`404: no workflow named ${JSON.stringify(ref)}`)
  return id
}
