// An import session as the JSON a reply or the stream's `metadata` sends: the documented fields in the
// schema's order, with the analysis spliced in as the text it is stored as (never parsed on the event loop).
import { jsonWith, RawJson } from '../../events/raw-json.ts'
import type { ImportSession } from '../../repositories/import-sessions.ts'

export function sessionJson(session: ImportSession): RawJson {
  const { id, source, status, progress, message, error, analysis, filename, url, branch, path, commit, logs, created_at, updated_at, finished_at, expires_at } = session
  const fields = { id, source, status, progress, message, error, filename, url, branch, path, commit, logs, created_at, updated_at, finished_at, expires_at }
  return new RawJson(jsonWith(fields, analysis ? { analysis } : {}))
}
