// A small, bounded pool of worker threads for the pure work a request can make long (a compose analysis,
// rendering a large graph), so that no input holds the event loop (issue 22). Piscina (the Node.js
// project's pool) keeps the threads, queues the jobs and, when a job's signal aborts, terminates the thread
// that runs it: a runaway job is stopped, not waited for. The library is loaded at start-up (prepare): on
// the first job it held the event loop 15-240 ms (measured, compiled build, load average ~11). The threads
// start on the first job, not at start-up, and end on close: a thread's start (seconds under tsx on a busy
// machine) runs on that thread, not on the event loop.
//
// Every job has a time budget (WORKER_JOB_TIMEOUT_MS), counted from when its work begins on a thread (not
// while it waits for one, nor while a new thread loads its modules); past it the job fails with JobOverrun
// (422, naming the limit: the request is well-formed but too costly to process, not too large to receive). A thread also has a heap limit, so one job that swells ends that thread, not the
// process.
import { MessageChannel } from 'node:worker_threads'
import type { Piscina } from 'piscina'
import { AppError, Unavailable } from '../errors.ts'
import type { JobAnswer } from './answer.ts'
import type { Jobs } from './jobs.ts'

export interface WorkerPoolOptions {
  /** Threads at most (WORKER_POOL_SIZE). */
  size: number
  /** A job's time budget (WORKER_JOB_TIMEOUT_MS). */
  timeoutMs: number
  /** Heap of one thread, in MB. */
  heapMb?: number
  /** A thread that failed outside a job (it is replaced). */
  onThreadError?: (err: unknown) => void
}

/** A job ran past its time budget (or its thread's heap limit); the message names the limit. */
export class JobOverrun extends AppError {
  constructor(message: string) { super(422, message) }
}

type Input<K extends keyof Jobs> = Parameters<Jobs[K]>[0]['input']
type Output<K extends keyof Jobs> = Awaited<ReturnType<Jobs[K]>> extends JobAnswer<infer T> ? T : never

/** Jobs waiting for a thread, per thread: beyond that the pool is busy and says so (503) rather than queue without bound. */
const QUEUE_PER_THREAD = 16
const DEFAULT_HEAP_MB = 512
/** How long a job may wait for a thread and for that thread to load its modules, before its own budget starts. */
const START_ALLOWANCE_MS = 60_000

// The compiled build runs jobs.js beside this file; under tsx (dev, tests) the thread starts from
// dev-entry.mjs, which registers tsx first. Never a .ts file from compiled code.
const UNDER_TSX = import.meta.url.endsWith('.ts')
const JOBS_FILE = new URL(UNDER_TSX ? './dev-entry.mjs' : './jobs.js', import.meta.url).href

export class WorkerPool {
  private pool: Promise<Piscina> | null = null
  private closed = false

  constructor(private readonly options: WorkerPoolOptions) {}

  get timeoutMs(): number { return this.options.timeoutMs }

  /** Loads the library and makes the pool (no thread yet), so that no request pays for loading it; the app calls it at start-up. */
  async prepare(): Promise<void> {
    if (!this.closed) await this.threads()
  }

  /** The pool, made by prepare() or on the first job; the threads cost nothing until a job. */
  private threads(): Promise<Piscina> {
    if (this.closed) throw new Unavailable('the service is shutting down; try again in a moment')
    this.pool ??= import('piscina').then(({ Piscina }) => {
      const pool = new Piscina({
        filename: JOBS_FILE,
        minThreads: 0,
        maxThreads: Math.max(1, this.options.size),
        // A thread idle for a minute is ended: a quiet service holds no threads.
        idleTimeout: 60_000,
        maxQueue: Math.max(1, this.options.size) * QUEUE_PER_THREAD,
        resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb ?? DEFAULT_HEAP_MB },
        // Under tsx the entry registers its own loader: the process's --import hooks (tsx, a test runner's)
        // would have a new thread compile its modules through hooks the event loop's thread waits on too.
        ...(UNDER_TSX && { execArgv: [] }),
      })
      // A thread that dies is replaced and its job rejected (reported by run); the pool's own event must not end the process.
      pool.on('error', (err: unknown) => this.options.onThreadError?.(err))
      return pool
    })
    return this.pool
  }

  /**
   * Runs a job on a thread. `what` names the work for messages ("the analysis", "rendering this workflow").
   * Throws the job's own refusal (as an AppError with its code), JobOverrun past the budget or the heap
   * limit, Unavailable when the queue is full or the pool closed.
   */
  async run<K extends keyof Jobs>(name: K, input: Input<K>, what: string): Promise<Output<K>> {
    const pool = await this.threads()
    const controller = new AbortController()
    let overrun: 'start' | 'budget' | null = null
    let timer = setTimeout(() => { overrun = 'start'; controller.abort() }, START_ALLOWANCE_MS)
    const { port1, port2 } = new MessageChannel()
    port1.once('message', () => {
      clearTimeout(timer)
      timer = setTimeout(() => { overrun = 'budget'; controller.abort() }, this.options.timeoutMs)
    })
    let answer: JobAnswer<Output<K>>
    try {
      answer = await pool.run({ input, started: port2 }, { name, signal: controller.signal, transferList: [port2] }) as JobAnswer<Output<K>>
    } catch (err) {
      throw this.failure(err, overrun, what)
    } finally {
      clearTimeout(timer)
      port1.close()
    }
    if ('refused' in answer) throw new AppError(answer.refused.statusCode, answer.refused.message)
    return answer.value
  }

  private failure(err: unknown, overrun: 'start' | 'budget' | null, what: string): Error {
    const e = err as { name?: string; code?: string; message?: string }
    if (overrun === 'budget') {
      return new JobOverrun(`${what} took longer than ${this.options.timeoutMs} ms, the limit for one job (WORKER_JOB_TIMEOUT_MS); it was stopped`)
    }
    if (overrun === 'start') return new Unavailable(`the service is busy with other heavy work: ${what} could not start within ${START_ALLOWANCE_MS / 1000} s; try again in a moment`)
    if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new JobOverrun(`${what} needed more than ${this.options.heapMb ?? DEFAULT_HEAP_MB} MB, the memory limit for one job; it was stopped`)
    }
    if (/queue is at limit/i.test(String(e?.message ?? ''))) return new Unavailable(`the service is busy with other heavy work (${this.options.size} worker threads, all busy and their queue full); try again in a moment`)
    if (this.closed) return new Unavailable('the service is shutting down; try again in a moment')
    return err instanceof Error ? err : new Error(String(err))
  }

  /** Ends the threads (a job in flight fails); later jobs are refused. */
  async close(): Promise<void> {
    this.closed = true
    const pool = this.pool
    this.pool = null
    if (pool) await (await pool).close({ force: true })
  }
}

