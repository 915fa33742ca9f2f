import { readFileSync } from 'node:fs'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

export const APP_NAME = 'Cluster Workflow Orchestration Service'
export const APP_VERSION = pkg.version
export const APP_DESCRIPTION = 'Turns workflows drawn on a canvas into Kubernetes manifests, applies them to a chosen cluster and namespace, watches what it deployed and streams status, logs and progress. Every API path is under /v1; every route outside /v1/api/auth needs `Authorization: Bearer <token>`. Failures are `{"error": "..."}`.'
