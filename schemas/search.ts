import { Type } from 'typebox'
import { Defaulted, Timestamp } from './common.ts'

export const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'matched literally, case-insensitive; must contain a non-space character (a blank query would match everything)' }),
  limit: Defaulted(Type.Integer({ minimum: 1, maximum: 20, default: 5, description: 'results per group' })),
}, { additionalProperties: false })

const NamedHit = Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false })

export const SearchResults = Type.Object({
  workflows: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), description: Type.String(), status: Type.String(), updated_at: Timestamp }, { additionalProperties: false })),
  clusters: Type.Array(NamedHit, { description: 'clusters the caller owns or that are shared with them' }),
  resources: Type.Array(Type.Object({
    id: Type.String(), name: Type.String(), kind: Type.String(), namespace: Type.Union([Type.String(), Type.Null()]), cluster: Type.String({ description: 'the cluster\'s name' }), status: Type.String(),
  }, { additionalProperties: false }), { description: 'the caller\'s tracked resources whose name matches, most recently updated first' }),
  plugins: Type.Array(NamedHit, { description: 'plugins whose name, display name, description or category matches (every signed-in user sees them)' }),
  templates: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), display_name: Type.String(), category: Type.String(), description: Type.String() }, { additionalProperties: false })),
  registries: Type.Array(NamedHit, { description: 'registries whose name or url matches (every signed-in user sees them)' }),
  builds: Type.Array(Type.Object({
    id: Type.String(), name: Type.String({ description: 'image_name:image_tag' }), status: Type.String(), image_ref: Type.Union([Type.String(), Type.Null()]), created_at: Timestamp,
  }, { additionalProperties: false }), { description: 'the caller\'s image builds whose image name, tag or repository URL matches, newest first' }),
}, { additionalProperties: false, description: 'only what the caller may see' })
