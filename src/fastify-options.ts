import type { DestinationStream } from 'pino'
import type { Config } from './config.ts'
import { loggerOptions } from './logger.ts'

export interface BuildOptions {
  /** Where log lines go (tests collect them); default stdout. */
  logStream?: DestinationStream
}

/** The server options every instance uses (also by tests that exercise one plugin on its own). */
export function fastifyOptions(config: Config, options: BuildOptions = {}) {
  const logger = loggerOptions(config)
  return {
    logger: options.logStream ? { ...logger, stream: options.logStream } : logger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    return503OnClosing: true,
    // Start-up includes opening the database; a busy machine must not turn that into a crash.
    pluginTimeout: 60_000,
    forceCloseConnections: 'idle' as const,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
  }
}

