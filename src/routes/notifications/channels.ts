// Notification channels (API.md §12): filled in by the notifications work.
import type { App } from '../../app-types.ts'

export default async function channelRoutes(_app: App) {}
