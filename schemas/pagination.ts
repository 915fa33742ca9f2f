// The list query and list reply shared by every paginated endpoint (API.md §1).
import { Type, type TSchema, type TObject, type TProperties } from 'typebox'
import { Defaulted, StringEnum } from './common.ts'

export const MAX_PAGE_SIZE = 100

/**
 * Query string of a list endpoint; `sort` accepts only the fields given for that endpoint.
 * Every parameter is optional with its default (see Defaulted): a generated client can call a list route
 * with no query at all, and the handler still sees page, limit, sort and order.
 */
export function PaginationQuery<const S extends string, P extends TProperties = {}>(sortFields: readonly [S, ...S[]], extra?: P) {
  return Type.Object({
    page: Defaulted(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'page number, from 1' })),
    limit: Defaulted(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 20, description: `items per page (at most ${MAX_PAGE_SIZE})` })),
    sort: Defaulted(StringEnum(sortFields, { default: sortFields[0], description: 'sort field' })),
    order: Defaulted(StringEnum(['asc', 'desc'], { default: 'desc', description: 'sort direction' })),
    search: Type.Optional(Type.String({ maxLength: 200, description: 'matched literally, case-insensitive' })),
    ...(extra ?? ({} as P)),
  }, { additionalProperties: false })
}

/** Reply of a list endpoint: `{<plural>: [...], total, page, limit}`. */
export function PageOf<const K extends string, T extends TSchema>(plural: K, item: T): TObject {
  return Type.Object({
    [plural]: Type.Array(item),
    total: Type.Integer({ minimum: 0 }),
    page: Type.Integer({ minimum: 1 }),
    limit: Type.Integer({ minimum: 1 }),
  }, { additionalProperties: false })
}
