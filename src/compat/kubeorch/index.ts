// The KubeOrch web UI adapter (API.md §10, docs/kubeorch-ui.md): the public KubeOrch UI speaks its own
// dialect of this API (camelCase, wrappers, other event payloads). Under /kubeorch/v1/api it is translated
// here, request names and query parameters in, wrappers and field names out, event and WebSocket payloads
// re-encoded, and every route calls the same services as /v1/api: same auth (plugins/auth.ts treats both
// roots alike), same owner scoping, same limits. Nothing outside this folder imports it; it is not in
// openapi.yaml (its routes are hidden there). KUBEORCH_UI_COMPAT=false leaves it out.
import type { App } from '../../app-types.ts'
import { withMessage } from './errors.ts'
import authRoutes from './routes/auth.ts'
import accountRoutes from './routes/account.ts'
import dashboardRoutes from './routes/dashboard.ts'
import workflowRoutes from './routes/workflows.ts'
import catalogueRoutes from './routes/catalogue.ts'
import clusterRoutes from './routes/clusters.ts'
import monitoringRoutes from './routes/monitoring.ts'
import userNotificationRoutes from './routes/user-notifications.ts'
import resourceRoutes from './routes/resources.ts'
import buildRoutes from './routes/builds.ts'
import registryRoutes from './routes/registries.ts'
import importRoutes from './routes/import.ts'

export const KUBEORCH_PREFIX = '/kubeorch/v1/api'

/** Registered with `{ prefix: KUBEORCH_PREFIX }`: every route below is relative to it. */
export default async function kubeorchAdapter(app: App) {
  // The UI shows `message` (login, register) where this API sends `error`: both, on every error here.
  app.addHook('onSend', withMessage)
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `route ${request.method} ${request.url.split('?')[0]} not found` })
  })
  await app.register(authRoutes)
  await app.register(accountRoutes)
  await app.register(dashboardRoutes)
  await app.register(workflowRoutes)
  await app.register(catalogueRoutes)
  await app.register(clusterRoutes)
  await app.register(monitoringRoutes)
  await app.register(userNotificationRoutes)
  await app.register(resourceRoutes)
  await app.register(buildRoutes)
  await app.register(registryRoutes)
  await app.register(importRoutes)
}
