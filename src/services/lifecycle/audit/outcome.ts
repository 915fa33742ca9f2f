// How a status reads in the audit log. 404 counts as denied: another user's id answers 404 (API.md §1),
// so that is what an attempt on someone else's record looks like; 401 and 403 are refusals by definition.
import type { AuditOutcome } from '../../../repositories/audit.ts'

const DENIED = new Set([401, 403, 404])

export function outcomeOf(status: number): AuditOutcome {
  if (status < 400) return 'ok'
  return DENIED.has(status) ? 'denied' : 'failed'
}
