// Connection-level commands: the handshake the driver's monitor and pool send, and other no-ops.
import { MAX_BSON_OBJECT_BYTES, MAX_MESSAGE_BYTES, MAX_WRITE_BATCH_SIZE } from '../wire.ts'
import type { CommandContext, CommandHandler } from '../state.ts'
import type { Doc } from '../values.ts'

/** MongoDB 7.0's wire version; the driver (v7) accepts 9..29. */
export const MAX_WIRE_VERSION = 21
export const SERVER_VERSION = '7.0.0'

function helloReply(cmd: Doc, ctx: CommandContext, legacy: boolean): Doc {
  const reply: Doc = {}
  if (cmd.helloOk === true) reply.helloOk = true
  // Legacy isMaster replies use `ismaster`; hello uses `isWritablePrimary`. No `compression` field:
  // compression is not offered. No topologyVersion: the driver then polls instead of streaming.
  if (legacy) reply.ismaster = true
  else reply.isWritablePrimary = true
  Object.assign(reply, {
    maxBsonObjectSize: MAX_BSON_OBJECT_BYTES,
    maxMessageSizeBytes: MAX_MESSAGE_BYTES,
    maxWriteBatchSize: MAX_WRITE_BATCH_SIZE,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1,
  })
  return reply
}

const ok: CommandHandler = () => ({ ok: 1 })

export const handshakeCommands: Record<string, CommandHandler> = {
  hello: (cmd, ctx) => helloReply(cmd, ctx, false),
  isMaster: (cmd, ctx) => helloReply(cmd, ctx, true),
  ismaster: (cmd, ctx) => helloReply(cmd, ctx, true),
  ping: ok,
  endSessions: ok,
  killSessions: ok,
  killAllSessions: ok,
  refreshSessions: ok,
  buildInfo: () => buildInfo(),
  buildinfo: () => buildInfo(),
  connectionStatus: () => ({ authInfo: { authenticatedUsers: [], authenticatedUserRoles: [] }, ok: 1 }),
  serverStatus: (_cmd, ctx) => ({
    host: 'embedded-mongo',
    version: SERVER_VERSION,
    process: 'embedded-mongo',
    pid: process.pid,
    uptime: Math.floor((Date.now() - ctx.state.startedAt) / 1000),
    localTime: new Date(),
    connections: { current: ctx.state.connections() },
    ok: 1,
  }),
}

function buildInfo(): Doc {
  return {
    version: SERVER_VERSION,
    gitVersion: 'embedded',
    versionArray: [7, 0, 0, 0],
    bits: 64,
    debug: false,
    maxBsonObjectSize: MAX_BSON_OBJECT_BYTES,
    javascriptEngine: 'none',
    storageEngines: ['embedded'],
    modules: [],
    ok: 1,
  }
}
