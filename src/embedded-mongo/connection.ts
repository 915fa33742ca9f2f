// One client socket: reassembles length-prefixed messages from the byte stream, runs them strictly in
// order (drivers never pipeline on a connection, and ordering must hold if one does), and writes the
// replies. A malformed or oversized message closes this socket and nothing else.
import type { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { recordTiming, runCommand } from './commands/index.ts'
import { encodeStoredBatchReply, STORED_BATCH, type CursorReplyDoc } from './encoded-docs.ts'
import { CommandError, ErrorCodes } from './errors.ts'
import type { ServerState } from './state.ts'
import type { Doc } from './values.ts'
import {
  encodeOpMsg, encodeOpReply, HEADER_BYTES, MAX_MESSAGE_BYTES, OP_REPLY_QUERY_FAILURE, parseMessage, ProtocolError,
  serializeReply, type QueryRequest,
} from './wire.ts'

const MIN_MESSAGE_BYTES = HEADER_BYTES + 5
// Stop reading from a client that sends faster than commands complete.
const PAUSE_AT_QUEUED = 8
const OP_QUERY_COMMANDS = new Set(['hello', 'isMaster', 'ismaster'])

let nextResponseId = 1

function responseId(): number {
  nextResponseId = (nextResponseId % 0x7fffffff) + 1
  return nextResponseId
}

function encodeReplyDoc(reply: Doc): Buffer {
  try {
    return (reply as CursorReplyDoc)[STORED_BATCH] ? encodeStoredBatchReply(reply as CursorReplyDoc) : serializeReply(reply)
  } catch (err) {
    // e.g. a single aggregation result over 16 MiB: report it instead of dropping the connection.
    return serializeReply(new CommandError(ErrorCodes.BadValue, `reply could not be encoded: ${(err as Error).message}`).toReply())
  }
}

export function serveConnection(socket: Socket, state: ServerState, connectionId: number): void {
  socket.setNoDelay(true)
  let chunks: Buffer[] = []
  let buffered = 0

  const fail = (reason: string): void => {
    state.logger?.warn(`embedded-mongo: closing connection ${connectionId}: ${reason}`)
    chunks = []
    buffered = 0
    socket.destroy()
  }

  const send = (data: Buffer): void => {
    if (!socket.destroyed && socket.writable) socket.write(data)
  }

  const handleQuery = async (req: QueryRequest): Promise<void> => {
    const name = req.fullCollectionName
    const command = (req.query.$query ?? req.query.query ?? req.query) as Doc
    const cmdName = Object.keys(command)[0] ?? ''
    if (!name.endsWith('.$cmd') || !OP_QUERY_COMMANDS.has(cmdName)) {
      const err = new CommandError(
        ErrorCodes.UnsupportedOpQueryCommand,
        `Unsupported OP_QUERY command: ${cmdName}. The client driver may require an upgrade.`,
      ).toReply()
      send(encodeOpReply(responseId(), req.requestId, encodeReplyDoc({ $err: err.errmsg, ...err }), OP_REPLY_QUERY_FAILURE))
      return
    }
    const reply = await runCommand(state, command, name.slice(0, -'.$cmd'.length), connectionId)
    send(encodeOpReply(responseId(), req.requestId, encodeReplyDoc(reply)))
  }

  const handle = async (message: Buffer): Promise<void> => {
    if (socket.destroyed) return
    let start = performance.now()
    let req
    try {
      req = parseMessage(message)
    } catch (err) {
      fail(err instanceof ProtocolError ? err.message : `unparseable message: ${String(err)}`)
      return
    }
    if (req.kind === 'query') {
      await handleQuery(req)
      return
    }
    const name = Object.keys(req.body)[0] ?? ''
    recordTiming(state.stats, name, performance.now() - start)
    const reply = await runCommand(state, req.body, req.body.$db, connectionId)
    if (req.moreToCome) return
    start = performance.now()
    const bytes = encodeOpMsg(responseId(), req.requestId, encodeReplyDoc(reply))
    recordTiming(state.stats, name, performance.now() - start)
    send(bytes)
  }

  // Messages run one at a time in arrival order; `draining` marks an active drain loop.
  const queue: Buffer[] = []
  let draining = false
  const drain = async (): Promise<void> => {
    draining = true
    try {
      for (let message = queue.shift(); message; message = queue.shift()) {
        if (queue.length < PAUSE_AT_QUEUED / 2 && socket.isPaused() && !socket.destroyed) socket.resume()
        await handle(message)
      }
    } catch (err) {
      fail(`internal error: ${(err as Error).message}`)
    } finally {
      draining = false
    }
  }

  const enqueue = (message: Buffer): void => {
    queue.push(message)
    if (queue.length >= PAUSE_AT_QUEUED) socket.pause()
    if (!draining) void drain()
  }

  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk)
    buffered += chunk.length
    while (buffered >= 4) {
      if (chunks[0].length < 4) chunks = [Buffer.concat(chunks)]
      const length = chunks[0].readInt32LE(0)
      if (length < MIN_MESSAGE_BYTES || length > MAX_MESSAGE_BYTES) {
        fail(`invalid message length ${length}`)
        return
      }
      if (buffered < length) break
      const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
      // Copy so a small message does not pin a large receive buffer while queued.
      const message = Buffer.from(all.subarray(0, length))
      const rest = all.subarray(length)
      chunks = rest.length > 0 ? [rest] : []
      buffered = rest.length
      enqueue(message)
    }
  })
  socket.on('error', () => {
    // Resets and aborted clients are routine; the socket is gone either way.
  })
}
