// Drift reports (API.md §12): filled in by the lifecycle work.
import type { App } from '../../app-types.ts'

export default async function driftRoutes(_app: App) {}
