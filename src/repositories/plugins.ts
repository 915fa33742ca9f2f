// The `plugins` collection: global records (every signed-in user reads them, admins write them). The
// unique index on `name` is what makes "same name → 409" hold under concurrent registrations, and what
// lets the built-in catalogue be loaded with an upsert that never duplicates.
import type { Collection, Db, Filter } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId, isId } from './ids.ts'
import { paginate, searchFilter, type PageRequest, type Page } from './pagination.ts'
import { isDuplicateKey, insertUnique } from './errors.ts'
import { Conflict } from '../errors.ts'
import type { ConfigFieldType, PluginCategory } from '../../schemas/plugin.ts'

export interface ConfigField {
  name: string
  label: string
  type: ConfigFieldType
  default?: string | number | boolean
  required: boolean
  options?: string[]
  description?: string
}

export interface CrdReference { group: string; version: string; kind: string; plural: string }

/** What an administrator (or the catalogue) defines; the service fills in everything else. */
export interface PluginDefinitionInput {
  name: string
  display_name: string
  description: string
  version: string
  category: PluginCategory
  icon: string
  crd: CrdReference
  config_fields: ConfigField[]
  template: string
}

export interface PluginDoc extends PluginDefinitionInput {
  _id: string
  enabled: boolean
  builtin: boolean
  /** An admin changed this built-in plugin with PUT: the catalogue no longer refreshes its definition. */
  customized: boolean
  created_at: Date
  updated_at: Date
}

/** A plugin as the API answers it (schemas/plugin.ts `Plugin`). */
export interface PluginDefinition extends PluginDefinitionInput {
  id: string
  enabled: boolean
  builtin: boolean
  created_at: string
  updated_at: string
}

export function toPlugin(doc: PluginDoc): PluginDefinition {
  return {
    id: doc._id, name: doc.name, display_name: doc.display_name, description: doc.description, version: doc.version,
    category: doc.category, icon: doc.icon, crd: { ...doc.crd }, config_fields: doc.config_fields.map((f) => ({ ...f })),
    template: doc.template, enabled: doc.enabled, builtin: doc.builtin,
    created_at: doc.created_at.toISOString(), updated_at: doc.updated_at.toISOString(),
  }
}

indexSetups.push(async (db) => {
  const c = db.collection('plugins')
  await c.createIndex({ name: 1 }, { unique: true })
  await c.createIndex({ enabled: 1, name: 1 })
})

export type CatalogueOutcome = 'inserted' | 'refreshed' | 'unchanged'

export class PluginRepository {
  private readonly c: Collection<PluginDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<PluginDoc>('plugins')
  }

  private duplicate(name: string): Conflict { return new Conflict(`a plugin named "${name}" exists`) }

  async create(input: PluginDefinitionInput): Promise<PluginDoc> {
    const at = this.now()
    const doc: PluginDoc = { _id: newId(), ...input, enabled: false, builtin: false, customized: false, created_at: at, updated_at: at }
    await insertUnique(this.c, doc, () => this.duplicate(input.name))
    return doc
  }

  findById(id: string): Promise<PluginDoc | null> {
    return isId(id) ? this.c.findOne({ _id: id }) : Promise.resolve(null)
  }

  findByName(name: string): Promise<PluginDoc | null> {
    return this.c.findOne({ name })
  }

  /** The plugins any of `refs` names, by id or by name, in one query (a workflow save checks all its plugin nodes at once). */
  findByRefs(refs: string[]): Promise<PluginDoc[]> {
    if (refs.length === 0) return Promise.resolve([])
    return this.c.find({ $or: [{ _id: { $in: refs.filter(isId) } }, { name: { $in: refs } }] }).toArray()
  }

  list(req: PageRequest, filter: { category?: PluginCategory; enabled?: boolean } = {}): Promise<Page<PluginDefinition>> {
    const f: Filter<PluginDoc> = {}
    if (filter.category !== undefined) f.category = filter.category
    if (filter.enabled !== undefined) f.enabled = filter.enabled
    return paginate(this.c, req, {
      filter: f,
      sortFields: { created_at: 'created_at', name: 'name', category: 'category', updated_at: 'updated_at' },
      searchFields: ['name', 'display_name', 'description'],
    }, toPlugin)
  }

  listEnabled(): Promise<PluginDoc[]> {
    return this.c.find({ enabled: true }).sort({ name: 1 }).toArray()
  }

  search(q: string, limit: number): Promise<PluginDoc[]> {
    return this.c.find(searchFilter<PluginDoc>(q, ['name', 'display_name', 'description', 'category'])).sort({ name: 1 }).limit(limit).toArray()
  }

  /**
   * Replaces the definition only while the stored version is still `expectedVersion`, so two concurrent
   * edits cannot both apply on the same base (the loser gets null and a 409 from the service).
   */
  async replaceDefinition(id: string, expectedVersion: string, input: PluginDefinitionInput, extra: { customized?: boolean } = {}): Promise<PluginDoc | null> {
    return this.c.findOneAndUpdate(
      { _id: id, version: expectedVersion },
      { $set: { ...input, ...extra, updated_at: this.now() } },
      { returnDocument: 'after' },
    )
  }

  /** Idempotent: a plugin already in the asked state is answered as it is (its updated_at unchanged). */
  async setEnabled(id: string, enabled: boolean): Promise<PluginDoc | null> {
    if (!isId(id)) return null
    const changed = await this.c.findOneAndUpdate({ _id: id, enabled: !enabled }, { $set: { enabled, updated_at: this.now() } }, { returnDocument: 'after' })
    return changed ?? this.c.findOne({ _id: id })
  }

  /**
   * Loads one catalogue entry: inserted (disabled) when no plugin has its name; its definition refreshed
   * when it is a built-in an admin has not edited and the catalogue's copy differs; otherwise left alone.
   * The enable state is never touched, so an admin's choice survives restarts and upgrades.
   */
  async upsertBuiltin(input: PluginDefinitionInput, differs: (stored: PluginDoc) => boolean): Promise<CatalogueOutcome> {
    const at = this.now()
    const res = await this.c.updateOne(
      { name: input.name },
      { $setOnInsert: { _id: newId(), ...input, enabled: false, builtin: true, customized: false, created_at: at, updated_at: at } },
      { upsert: true },
    ).catch((err: unknown) => {
      // Two instances starting together race on the insert; the unique index lets exactly one win.
      if (isDuplicateKey(err)) return { upsertedCount: 0 }
      throw err
    })
    if (res.upsertedCount === 1) return 'inserted'
    const stored = await this.c.findOne({ name: input.name })
    if (!stored || !stored.builtin || stored.customized || !differs(stored)) return 'unchanged'
    await this.c.updateOne({ _id: stored._id, builtin: true, customized: false }, { $set: { ...input, updated_at: at } })
    return 'refreshed'
  }
}
