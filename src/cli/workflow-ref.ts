// A WORKFLOW argument: its id, or its name (exact; the caller's own workflows only, as every read is).
import { ok } from './client.ts'
import { CliError } from './errors.ts'
import type { Session } from './session.ts'

const OBJECT_ID = /^[0-9a-f]{24}$/i

export async function resolveWorkflowId(s: Session, ref: string): Promise<string> {
  if (OBJECT_ID.test(ref)) return ref
  const page = await ok(s.server, s.client.GET('/v1/api/workflows', { params: { query: { search: ref, limit: 100 } } }))
  const exact = page.workflows.filter((w) => w.name === ref)
  if (exact.length === 1) return exact[0].id
  if (exact.length > 1) throw new CliError(`${exact.length} workflows are named ${JSON.stringify(ref)}: use the id (${exact.map((w) => w.id).join(', ')})`)
  throw new CliError(`404: no workflow named ${JSON.stringify(ref)}`)
}
