// The workflow stream's payloads cwo reads, typed by the server's own schemas (openapi.yaml documents them as
// x-events, which the generated client types do not cover). Type-only: nothing of the server is loaded at run time.
import type { Static } from 'typebox'
import type { CompleteEvent, ErrorEvent, NodeStatus, NodeUpdateEvent, StatusChangeEvent } from '../../../schemas/streams.ts'

export type NodeStatusPayload = Static<typeof NodeStatus>
export type NodeUpdate = Static<typeof NodeUpdateEvent>
export type StatusChange = Static<typeof StatusChangeEvent>
export type StreamError = Static<typeof ErrorEvent>
export type RunComplete = Static<typeof CompleteEvent>
