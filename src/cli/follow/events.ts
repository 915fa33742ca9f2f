// The payloads of the event streams and terminal messages cwo reads, typed by the server's own schemas
// (openapi.yaml documents them as x-events, which the generated client types do not cover). Type-only:
// nothing of the server is loaded at run time.
import type { Static } from 'typebox'
import type { PodLogEvent, PodLogsError, PodLogsMetadata, TerminalServerMessage } from '../../../schemas/pod-streams.ts'
import type { BuildCompleteEvent, BuildFailedEvent, BuildLogEvent, BuildProgressEvent } from '../../../schemas/build.ts'
import type { ImportLogEvent, ImportProgressEvent } from '../../../schemas/import.ts'

export type LogsMetadata = Static<typeof PodLogsMetadata>
export type LogLine = Static<typeof PodLogEvent>
export type LogsError = Static<typeof PodLogsError>
export type TerminalMessage = Static<typeof TerminalServerMessage>
export type BuildProgress = Static<typeof BuildProgressEvent>
export type BuildLog = Static<typeof BuildLogEvent>
export type BuildComplete = Static<typeof BuildCompleteEvent>
export type BuildFailed = Static<typeof BuildFailedEvent>
export type ImportProgress = Static<typeof ImportProgressEvent>
export type ImportLog = Static<typeof ImportLogEvent>
