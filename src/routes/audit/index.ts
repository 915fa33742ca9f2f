// The audit log (API.md §12): every entry for admins, a user's own for everyone. Written by plugins/audit.ts.
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { AdminAuditQuery, AuditList, OwnAuditQuery } from '../../../schemas/audit.ts'
import { pageReply } from '../../repositories/pagination.ts'

const tags = ['audit']

const RECORDED = 'One entry per state-changing request under /v1/api and /kubeorch/v1/api (every method but GET, HEAD and OPTIONS; of the auth routes, all but `POST /auth/refresh`, which changes nothing stored), written once the response is sent; one per terminal session edge (`resource.exec`: `session.phase` open, then close with exit code, bytes in/out and duration); share changes as `cluster.share` / `cluster.unshare` with the cluster\'s id as target and the grantee as `subject_id`. `action` is `<group>.<verb>` from the route\'s operationId (`runWorkflow` → `workflow.run`); `outcome` is `ok` below 400, `denied` for 401, 403 and 404 (another user\'s id answers 404), `failed` otherwise. Entries hold no body, query string, header or secret. Newest first; filters combine (AND); `from`/`to` are ISO 8601 times, inclusive. Kept AUDIT_RETENTION_DAYS (90).'

export default async function auditRoutes(app: App) {
  const service = app.audit.service

  app.get('/v1/api/admin/audit', {
    schema: {
      tags, operationId: 'listAuditEntries', summary: 'every user\'s audit entries, newest first (admin)',
      description: RECORDED, querystring: AdminAuditQuery, response: { 200: AuditList, ...errorResponses(400, 401, 403) },
    },
  }, async (req) => pageReply('entries', await service.listAll(req.query)))

  app.get('/v1/api/audit', {
    schema: {
      tags, operationId: 'listOwnAuditEntries', summary: 'the caller\'s own audit entries (they are the actor), newest first',
      description: RECORDED, querystring: OwnAuditQuery, response: { 200: AuditList, ...errorResponses(400, 401) },
    },
  }, async (req) => pageReply('entries', await service.listOwn(req.user.id, req.query)))
}
