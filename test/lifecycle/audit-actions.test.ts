// Audit action names are derived, not listed: from the operationId (the group's noun taken out), from the
// canonical twin for an adapter route, from the path when there is neither, and a route's override wins.
import t from 'tap'
import { nameRoute, canonicalKey, singular, verbFromOperationId } from '../../src/services/lifecycle/audit/actions.ts'
import { outcomeOf } from '../../src/services/lifecycle/audit/outcome.ts'

t.test('operationId → <group>.<verb>', async (t) => {
  const cases: Array<[string, string, string, string]> = [
    ['POST', '/v1/api/workflows/:id/run', 'runWorkflow', 'workflow.run'],
    ['POST', '/v1/api/workflows/:id/rollback', 'rollbackWorkflow', 'workflow.rollback'],
    ['POST', '/v1/api/workflows/:id/sync', 'syncWorkflow', 'workflow.sync'],
    ['PUT', '/v1/api/workflows/:id/status', 'setWorkflowStatus', 'workflow.set_status'],
    ['POST', '/v1/api/workflows/:id/versions/:version/restore', 'restoreVersion', 'workflow.restore_version'],
    ['POST', '/v1/api/clusters/:name/share', 'shareCluster', 'cluster.share'],
    ['DELETE', '/v1/api/clusters/:name/share/:user_id', 'unshareCluster', 'cluster.unshare'],
    ['PUT', '/v1/api/clusters/:name/credentials', 'updateClusterCredentials', 'cluster.update_credentials'],
    ['PUT', '/v1/api/clusters/:name/default', 'setDefaultCluster', 'cluster.set_default'],
    ['POST', '/v1/api/admin/registries', 'createRegistry', 'registry.create'],
    ['POST', '/v1/api/resources/sync', 'syncResources', 'resource.sync'],
    ['POST', '/v1/api/notifications/read-all', 'markAllNotificationsRead', 'notification.mark_all_read'],
    ['POST', '/v1/api/notifications/channels', 'createNotificationChannel', 'notification.create_channel'],
    ['POST', '/v1/api/import/create-workflow', 'createWorkflowFromImport', 'import.create_workflow'],
    ['POST', '/v1/api/auth/login', 'login', 'auth.login'],
    ['POST', '/v1/api/auth/oauth/exchange', 'exchangeOAuthCode', 'auth.exchange_oauth_code'],
    ['PUT', '/v1/api/settings/regenerate-setting', 'updateRegenerateSetting', 'settings.update_regenerate_setting'],
    ['PUT', '/v1/api/profile/password', 'changePassword', 'profile.change_password'],
  ]
  for (const [method, url, op, action] of cases) t.equal(nameRoute(method, url, op)?.action, action, `${op} → ${action}`)
})

t.test('the target is the first path parameter and the collection before it; a user_id after it is the subject', async (t) => {
  t.match(nameRoute('POST', '/v1/api/workflows/:id/versions/:version/restore', 'restoreVersion'), { target_type: 'workflow', target_param: 'id', subject_param: null })
  t.match(nameRoute('DELETE', '/v1/api/clusters/:name/share/:user_id', 'unshareCluster'), { target_type: 'cluster', target_param: 'name', subject_param: 'user_id' })
  t.match(nameRoute('PUT', '/v1/api/notifications/channels/:id', 'updateNotificationChannel'), { action: 'notification.update_channel', target_type: 'channel', target_param: 'id' })
  t.match(nameRoute('POST', '/v1/api/workflows', 'createWorkflow'), { target_type: 'workflow', target_param: null })
  t.match(nameRoute('PUT', '/v1/api/admin/registries/:id', 'updateRegistry'), { target_type: 'registry', target_param: 'id' })
})

t.test('without an operationId, the path names it; an override wins; outside the API roots nothing', async (t) => {
  t.equal(nameRoute('POST', '/kubeorch/v1/api/workflows/:id/run')?.action, 'workflow.run')
  t.equal(nameRoute('PUT', '/kubeorch/v1/api/workflows/:id')?.action, 'workflow.update')
  t.equal(nameRoute('POST', '/kubeorch/v1/api/workflows')?.action, 'workflow.create')
  t.equal(nameRoute('DELETE', '/kubeorch/v1/api/clusters/:id/share/:user_id')?.action, 'cluster.delete_share')
  t.equal(nameRoute('POST', '/kubeorch/v1/api/auth/login')?.action, 'auth.login')
  t.equal(nameRoute('POST', '/kubeorch/v1/api/alerts/rules')?.action, 'alert.create_rule')
  t.equal(nameRoute('PUT', '/kubeorch/v1/api/alerts/rules/:id')?.action, 'alert.update_rule')
  t.equal(nameRoute('PATCH', '/kubeorch/v1/api/alerts/rules/:id/toggle')?.action, 'alert.toggle_rule')
  t.equal(nameRoute('PATCH', '/kubeorch/v1/api/alerts/events/:id/acknowledge')?.action, 'alert.acknowledge_event')
  t.equal(nameRoute('POST', '/kubeorch/v1/api/alerts/test-fire')?.action, 'alert.test_fire')
  t.equal(nameRoute('POST', '/kubeorch/v1/api/user-notifications/mark-all-read')?.action, 'user_notification.mark_all_read')
  t.equal(nameRoute('PATCH', '/kubeorch/v1/api/user-notifications/:id/read')?.action, 'user_notification.read')
  t.equal(nameRoute('GET', '/v1/api/resources/:id/exec/terminal', 'openResourceTerminal', { action: 'resource.exec' })?.action, 'resource.exec')
  t.equal(nameRoute('POST', '/health'), null)
  t.equal(nameRoute('POST', '/v1/apis/x'), null, 'a lookalike prefix is not the API')
})

t.test('an adapter route and its canonical twin share a key whatever their parameters are called', async (t) => {
  t.equal(canonicalKey('PUT', '/kubeorch/v1/api/clusters/:id/default'), canonicalKey('PUT', '/v1/api/clusters/:name/default'))
  t.not(canonicalKey('POST', '/kubeorch/v1/api/clusters/:id/default'), canonicalKey('PUT', '/v1/api/clusters/:name/default'))
})

t.test('helpers: singular nouns, verbs without a dangling preposition', async (t) => {
  t.same(['workflows', 'registries', 'settings', 'status', 'import', 'class'].map(singular), ['workflow', 'registry', 'settings', 'status', 'import', 'class'])
  t.equal(verbFromOperationId('createWorkflowFromImport', 'import'), 'create_workflow')
  t.equal(verbFromOperationId('workflowRun', 'workflow'), 'workflow_run', 'the first word is the verb, never taken out')
})

t.test('outcomes: ok below 400, denied for 401/403/404, failed otherwise', async (t) => {
  t.same([101, 200, 204, 302, 400, 401, 403, 404, 409, 413, 429, 500, 502].map(outcomeOf),
    ['ok', 'ok', 'ok', 'ok', 'failed', 'denied', 'denied', 'denied', 'failed', 'failed', 'failed', 'failed', 'failed'])
})
