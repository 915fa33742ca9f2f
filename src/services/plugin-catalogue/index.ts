// The built-in plugin catalogue: at least one real operator per category, loaded at start-up (disabled until
// an admin enables each). Bump an entry's `version` when its fields or template change, like an admin edit.
import type { CatalogueEntry } from './types.ts'
import { virtualization } from './virtualization.ts'
import { networking } from './networking.ts'
import { storage } from './storage.ts'
import { monitoring } from './monitoring.ts'
import { security } from './security.ts'
import { workflow } from './workflow.ts'
import { database } from './database.ts'
import { messaging } from './messaging.ts'
import { backup } from './backup.ts'
import { ciCd } from './ci-cd.ts'
import { ml } from './ml.ts'
import { policy } from './policy.ts'
import { scaling } from './scaling.ts'

export type { CatalogueEntry }

export const BUILTIN_PLUGINS: readonly CatalogueEntry[] = [
  ...virtualization, ...networking, ...storage, ...monitoring, ...security, ...workflow, ...database,
  ...messaging, ...backup, ...ciCd, ...ml, ...policy, ...scaling,
]
