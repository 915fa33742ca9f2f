// Turns a cluster's server and credentials into a client-node KubeConfig, in memory. The server never
// runs a program or reads one of its own files for a user, and never falls back to its own identity:
// user kubeconfigs are read with an allow-list of fields, and only vetted values reach client-node
// (whose own loader would read `token-file` from disk while parsing).
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from './client.ts'
import { parse } from 'yaml'
import { BadRequest } from '../errors.ts'
import type { ClusterCredentials } from './credentials.ts'
import type { OutboundPolicy } from '../net/outbound-policy.ts'
import { guardAgent, originOfUrl } from '../net/guarded-agent.ts'

// Anything that makes a client run a command, read a local file, or route through another host.
const REFUSED_KEYS: Record<string, string> = {
  exec: 'exec plugins are not allowed: the server never runs programs from user input',
  'auth-provider': 'auth-provider plugins are not allowed; use auth_type oidc instead',
  'token-file': 'file paths are not allowed; put the token itself in the kubeconfig',
  tokenFile: 'file paths are not allowed; put the token itself in the kubeconfig',
  'client-certificate': 'file paths are not allowed; use client-certificate-data',
  'client-key': 'file paths are not allowed; use client-key-data',
  'certificate-authority': 'file paths are not allowed; use certificate-authority-data',
  'proxy-url': 'proxy-url is not allowed',
  as: 'impersonation (as) is not allowed',
  'as-groups': 'impersonation (as-groups) is not allowed',
  'as-uid': 'impersonation (as-uid) is not allowed',
  'as-user-extra': 'impersonation (as-user-extra) is not allowed',
}

// `seen` guards against YAML aliases that make the document refer to itself.
function findRefused(node: unknown, path: string, seen = new WeakSet<object>()): string | undefined {
  if (!node || typeof node !== 'object' || seen.has(node)) return undefined
  seen.add(node)
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) { const hit = findRefused(item, `${path}[${i}]`, seen); if (hit) return hit }
  } else {
    for (const [key, value] of Object.entries(node)) {
      if (key in REFUSED_KEYS && value !== null && value !== undefined && value !== '') return `kubeconfig ${path}.${key}: ${REFUSED_KEYS[key]}`
      const hit = findRefused(value, `${path}.${key}`, seen)
      if (hit) return hit
    }
  }
  return undefined
}

interface Named<T> { name?: string; [k: string]: unknown; cluster?: T; user?: T; context?: T }
type Entry = Record<string, unknown>

export interface ParsedKubeconfig { server: string; caData?: string; skipTLSVerify: boolean; tlsServerName?: string; token?: string; certData?: string; keyData?: string; username?: string; password?: string; namespace?: string }

/** Reads the chosen context (or the current one) out of a user's kubeconfig, refusing anything unsafe. */
export function readUserKubeconfig(text: string, contextName?: string): ParsedKubeconfig {
  let doc: Record<string, unknown>
  try {
    doc = parse(text, { maxAliasCount: 50, prettyErrors: false }) as Record<string, unknown>
  } catch {
    throw new BadRequest('kubeconfig is not valid YAML')
  }
  if (!doc || typeof doc !== 'object') throw new BadRequest('kubeconfig is not a YAML mapping')
  const refused = findRefused(doc, '')
  if (refused) throw new BadRequest(refused)
  const list = (key: string) => (Array.isArray(doc[key]) ? (doc[key] as Named<Entry>[]) : [])
  const name = contextName ?? (typeof doc['current-context'] === 'string' ? doc['current-context'] : undefined) ?? list('contexts')[0]?.name
  const context = list('contexts').find((c) => c.name === name)?.context
  if (!context) throw new BadRequest(contextName ? `kubeconfig has no context "${contextName}"` : 'kubeconfig has no context to use')
  const cluster = list('clusters').find((c) => c.name === context.cluster)?.cluster
  const user = list('users').find((u) => u.name === context.user)?.user ?? {}
  if (!cluster || typeof cluster.server !== 'string') throw new BadRequest(`kubeconfig context "${name}" names no cluster with a server`)
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined)
  const parsed: ParsedKubeconfig = {
    server: cluster.server.replace(/\/$/, ''),
    caData: str(cluster['certificate-authority-data']),
    skipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: str(cluster['tls-server-name']),
    token: str(user.token), certData: str(user['client-certificate-data']), keyData: str(user['client-key-data']),
    username: str(user.username), password: str(user.password),
    namespace: str(context.namespace),
  }
  if (!parsed.token && !(parsed.certData && parsed.keyData) && !(parsed.username && parsed.password)) {
    throw new BadRequest(`kubeconfig user of context "${name}" has no credentials (token, client certificate data, or username and password)`)
  }
  return parsed
}

/**
 * The in-memory KubeConfig for a cluster record. `bearerToken` is the current ID token for oidc clusters
 * (see oidc-token.ts); every other type carries its own credentials. Every connection it makes is held to
 * `policy` (guardKubeConfig).
 */
export async function buildKubeConfig(server: string, creds: ClusterCredentials, policy: OutboundPolicy, bearerToken?: string): Promise<KubeConfig> {
  const skipTLSVerify = creds.insecure_skip_tls_verify === true
  let cluster: Entry
  let user: Entry
  let namespace: string | undefined
  switch (creds.auth_type) {
    case 'kubeconfig': {
      const p = readUserKubeconfig(creds.kubeconfig, creds.context)
      cluster = { server: p.server, caData: p.caData, skipTLSVerify: skipTLSVerify || p.skipTLSVerify, tlsServerName: p.tlsServerName }
      user = { token: p.token, certData: p.certData, keyData: p.keyData, username: p.username, password: p.password }
      namespace = p.namespace
      break
    }
    case 'token':
      cluster = { server, caData: creds.ca_data, skipTLSVerify }
      user = { token: creds.token }
      break
    case 'serviceaccount':
      cluster = { server, caData: creds.ca_data, skipTLSVerify }
      user = { token: creds.token }
      namespace = creds.namespace
      break
    case 'certificate':
      cluster = { server, caData: creds.ca_data, skipTLSVerify }
      user = { certData: creds.client_cert_data, keyData: creds.client_key_data }
      break
    case 'oidc':
      if (!bearerToken) throw new BadRequest('oidc cluster has no ID token yet')
      cluster = { server, caData: creds.ca_data, skipTLSVerify }
      user = { token: bearerToken }
      break
  }
  const kc = new (await k8s()).KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: 'target', ...cluster }],
    users: [{ name: 'user', ...user }],
    contexts: [{ name: 'target', cluster: 'target', user: 'user', ...(namespace && { namespace }) }],
    currentContext: 'target',
  })
  return guardKubeConfig(kc, policy)
}

type AgentMaker = (cluster: unknown, options: unknown) => import('node:http').Agent

/**
 * Holds every connection of a KubeConfig to the outbound policy: every client-node path (the generated
 * API clients, Watch, the health check, exec/attach/port-forward over `ws`, and our own log requests through
 * applyToHTTPSOptions) takes its agent from KubeConfig.createAgent, so guarding what that returns covers
 * them all, redirects included (node-fetch follows them through the same agent).
 */
export function guardKubeConfig(kc: KubeConfig, policy: OutboundPolicy): KubeConfig {
  const server = kc.getCurrentCluster()?.server
  if (!server) throw new BadRequest('the kubeconfig names no current cluster')
  const origin = originOfUrl(server)
  const target = kc as unknown as { createAgent: AgentMaker }
  const make = target.createAgent.bind(kc)
  target.createAgent = (cluster, options) => guardAgent(make(cluster, options), { policy, origin, what: 'cluster server' })
  return kc
}
