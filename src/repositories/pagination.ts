// One way to page through a collection: an owner-scoped filter, a literal search over named fields, an
// allow-listed sort (the route schema restricts it; this re-checks so a service cannot pass anything else)
// and a reply of `{<plural>, total, page, limit}`.
import type { Collection, Document, Filter, Sort } from 'mongodb'
import { BadRequest } from '../errors.ts'
import { MAX_PAGE_SIZE } from '../../schemas/pagination.ts'

export interface PageRequest {
  page?: number
  limit?: number
  sort?: string
  order?: 'asc' | 'desc'
  search?: string
}

export interface PageSpec<T extends Document> {
  /** Filter every result must match; callers put the owner here. */
  filter: Filter<T>
  /** API sort field → document field. The first entry is the default. */
  sortFields: Record<string, string>
  /** Document fields that `search` is matched against. */
  searchFields?: string[]
  /** Find projection (may compute fields); the whole document when absent. */
  projection?: Document
}

export interface Page<T> { items: T[]; total: number; page: number; limit: number }

/** Escapes every regular-expression metacharacter so user text matches literally. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
}

export function searchFilter<T extends Document>(search: string | undefined, fields: string[] | undefined): Filter<T> {
  const term = search?.trim()
  if (!term || !fields?.length) return {}
  const pattern = { $regex: escapeRegex(term), $options: 'i' }
  return { $or: fields.map((f) => ({ [f]: pattern })) } as Filter<T>
}

export async function paginate<T extends Document, R>(collection: Collection<T>, req: PageRequest, spec: PageSpec<T>, map: (doc: T) => R): Promise<Page<R>> {
  const page = req.page ?? 1
  const limit = req.limit ?? 20
  if (!Number.isInteger(page) || page < 1) throw new BadRequest('page must be a whole number from 1')
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) throw new BadRequest(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`)
  const sortNames = Object.keys(spec.sortFields)
  const sortName = req.sort ?? sortNames[0]
  const sortField = spec.sortFields[sortName]
  if (!sortField) throw new BadRequest(`sort must be one of ${sortNames.join(', ')}`)
  const direction = req.order === 'asc' ? 1 : -1
  const search = searchFilter<T>(req.search, spec.searchFields)
  const filter = (Object.keys(search).length ? { $and: [spec.filter, search] } : spec.filter) as Filter<T>
  // _id as a tie-breaker keeps pages stable when many documents share the sort value.
  const sort: Sort = sortField === '_id' ? { _id: direction } : { [sortField]: direction, _id: direction }
  const [docs, total] = await Promise.all([
    collection.find(filter, spec.projection && { projection: spec.projection }).sort(sort).skip((page - 1) * limit).limit(limit).toArray(),
    collection.countDocuments(filter),
  ])
  return { items: docs.map((d) => map(d as T)), total, page, limit }
}

/** Shapes a page into the API reply `{<plural>: [...], total, page, limit}`. */
export function pageReply<K extends string, R>(plural: K, page: Page<R>): Record<K, R[]> & { total: number; page: number; limit: number } {
  return { [plural]: page.items, total: page.total, page: page.page, limit: page.limit } as Record<K, R[]> & { total: number; page: number; limit: number }
}
