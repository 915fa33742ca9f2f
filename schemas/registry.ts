// Container registries as the API shows them (API.md §8). Passwords and tokens are write-only: a reply
// says whether credentials are stored (`has_credentials`), never what they are.
import { Type } from 'typebox'
import { Timestamp, Id, StringEnum } from './common.ts'
import { PaginationQuery, PageOf } from './pagination.ts'

export const REGISTRY_TYPES = ['dockerhub', 'ghcr', 'gcr', 'ecr', 'acr', 'quay', 'harbor', 'custom'] as const
export const RegistryType = StringEnum(REGISTRY_TYPES, {
  description: 'dockerhub, ghcr, gcr and quay have a default url; ecr, acr, harbor and custom need one',
})
const RegistryStatus = StringEnum(['unknown', 'connected', 'error'], { description: 'outcome of the last connection test' })

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'unique, case-insensitively' })
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'the registry API root (https; http only with ALLOW_INSECURE_CLUSTERS); `/v2/` is appended to it' })
const credentialProperties = {
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'user name for the registry (returned)' })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384, description: 'write-only' })),
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384, description: 'write-only: an access token used in place of the password (give one of password and token)' })),
}

export const CreateRegistryBody = Type.Object({
  name: Name,
  registry_type: RegistryType,
  url: Type.Optional(Url),
  is_default: Type.Optional(Type.Boolean({ description: 'make it the default registry (the first registry always is)' })),
  ...credentialProperties,
}, { additionalProperties: false, description: 'a password or token needs a username' })

export const UpdateRegistryBody = Type.Object({
  name: Type.Optional(Name),
  registry_type: Type.Optional(RegistryType),
  url: Type.Optional(Url),
  ...credentialProperties,
  clear_credentials: Type.Optional(Type.Boolean({ description: 'forget the stored credentials (anonymous access from now on)' })),
}, {
  additionalProperties: false, minProperties: 1,
  description: 'stored credentials are replaced only when a password or token is given; a username alone renames the stored login',
})

export const Registry = Type.Object({
  id: Id,
  name: Type.String(),
  registry_type: RegistryType,
  url: Type.String(),
  host: Type.String({ description: 'the host images name this registry by (`docker.io` for Docker Hub); what lookup matches' }),
  username: Type.Union([Type.String(), Type.Null()]),
  has_credentials: Type.Boolean({ description: 'a password or token is stored' }),
  status: RegistryStatus,
  status_message: Type.String(),
  is_default: Type.Boolean({ description: 'exactly one registry is the default' }),
  last_checked_at: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Registry', additionalProperties: false })

export const RegistryParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
export const RegistryListQuery = PaginationQuery(['created_at', 'name', 'registry_type', 'status', 'updated_at'], {
  registry_type: Type.Optional(RegistryType),
})
export const RegistryList = PageOf('registries', Type.Ref('Registry'))

export const RegistryLookupQuery = Type.Object({
  image: Type.String({ minLength: 1, maxLength: 512, description: 'an image reference: `nginx`, `user/app:tag`, `ghcr.io/o/a:1`, `localhost:5000/a@sha256:…`' }),
}, { additionalProperties: false })

export const RegistryTestResult = Type.Object({
  status: StringEnum(['connected', 'error']),
  message: Type.String({ description: 'what happened; never carries credentials or tokens' }),
}, { additionalProperties: false })
