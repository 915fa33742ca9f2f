// Placeholder while the adapter is being built; replaced by this group's routes.
import type { App } from '../../../app-types.ts'

export default async function routes(_app: App) {}
