// cwo login | logout | context [SERVER] | whoami: the tokens kept per server (config.ts) and which is current.
// A password never comes from a flag's value: it would stay in the shell's history and show in `ps`.
import { createInterface } from 'node:readline'
import type { ReadStream } from 'node:tty'
import { Option, type Command } from 'commander'
import { apiClient, apiError, ok, unreachable } from '../client.ts'
import { configPath, normalizeServer, readConfig, updateConfig } from '../config.ts'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import type { CliIO } from '../io.ts'
import { table } from '../output.ts'
import { resolveServer } from '../session.ts'

/** The lines of stdin, read one at a time (email then password may both come piped). */
function stdinLines(io: CliIO) {
  const rl = createInterface({ input: io.stdin, crlfDelay: Infinity, terminal: false })
  const lines = rl[Symbol.asyncIterator]()
  return {
    async next(what: string): Promise<string> {
      const line = await lines.next()
      if (line.done) throw new CliError(`no ${what} on stdin`, EXIT.usage)
      return line.value
    },
    close: () => rl.close(),
  }
}

/** A password typed at a terminal, not echoed. */
function promptHidden(io: CliIO, prompt: string): Promise<string> {
  const tty = io.stdin as ReadStream
  io.stderr.write(prompt)
  return new Promise((resolve, reject) => {
    let value = ''
    const done = (err?: CliError) => {
      tty.setRawMode(false)
      tty.pause()
      tty.off('data', onData)
      io.stderr.write('\n')
      if (err) reject(err)
      else resolve(value)
    }
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done()
        if (ch === '\u0003') return done(new CliError('interrupted', EXIT.interrupted))
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else value += ch
      }
    }
    tty.setRawMode(true)
    tty.resume()
    tty.on('data', onData)
  })
}

interface LoginOptions { email?: string; passwordStdin?: boolean; password?: string | boolean }

export function registerAuth(program: Command, ctx: CommandContext): void {
  program.command('login')
    .description('log in to the server and keep its token (per server, readable by you only); it becomes the current server')
    .option('--email <email>', 'your email (asked on stdin without it)')
    .option('--password-stdin', 'read the password from stdin (one line); else $CWO_PASSWORD, else asked at the terminal')
    .addOption(new Option('--password [password]').hideHelp())
    .action(async (o: LoginOptions) => {
      if (o.password !== undefined) {
        throw new CliError('--password is refused: a password in a command line stays in the shell history and shows in ps; use --password-stdin or CWO_PASSWORD', EXIT.usage)
      }
      const server = await resolveServer(ctx.io, ctx.serverFlag)
      const interactive = Boolean((ctx.io.stdin as ReadStream).isTTY)
      const lines = stdinLines(ctx.io)
      let email: string
      let password: string
      try {
        if (o.email) email = o.email
        else {
          if (interactive) ctx.io.stderr.write('email: ')
          email = (await lines.next('email')).trim()
        }
        if (o.passwordStdin) password = await lines.next('password')
        else if (ctx.io.env.CWO_PASSWORD) password = ctx.io.env.CWO_PASSWORD
        else if (interactive) {
          lines.close()
          password = await promptHidden(ctx.io, 'password: ')
        } else throw new CliError('no password: use --password-stdin (e.g. cwo login --email you@example.com --password-stdin < file) or set CWO_PASSWORD', EXIT.usage)
      } finally {
        lines.close()
      }
      if (!email) throw new CliError('no email given', EXIT.usage)
      if (!password) throw new CliError('the password is empty', EXIT.usage)
      const client = apiClient(server, null, ctx.io.signal)
      const { data: answer, error, response } = await client.POST('/v1/api/auth/login', { body: { email, password } }).catch((err) => { throw unreachable(server, err) })
      // A refused login is the API's message as it is: "log in again" (apiError's hint for a 401) is no help here.
      if (!answer) throw response.status === 401 ? new CliError(`401: ${error?.error ?? 'refused'}`) : apiError(response.status, error)
      await updateConfig(configPath(ctx.io.env), (config) => {
        config.servers[server] = { token: answer.token, email: answer.user.email, saved_at: new Date().toISOString() }
        config.current = server
      })
      ctx.note(`logged in to ${server} as ${answer.user.email}`)
      // For a script: who it is now, never the token.
      if (ctx.format !== 'table') ctx.print({ server, user: answer.user })
      if (ctx.io.env.CWO_TOKEN) ctx.note('note: CWO_TOKEN is set and is used instead of the stored token while it is')
    })

  program.command('logout')
    .description("forget the server's token")
    .action(async () => {
      const server = await resolveServer(ctx.io, ctx.serverFlag)
      const had = await updateConfig(configPath(ctx.io.env), (config) => {
        const present = server in config.servers
        delete config.servers[server]
        return present
      })
      ctx.note(had ? `logged out of ${server}` : `not logged in to ${server}`)
    })

  program.command('context')
    .description('the servers you are logged in to (the current one marked), or switch to SERVER')
    .argument('[server]', 'make this server current (you must be logged in to it)')
    .action(async (target?: string) => {
      const path = configPath(ctx.io.env)
      if (target) {
        const server = normalizeServer(target)
        await updateConfig(path, (config) => {
          if (!config.servers[server]) {
            const known = Object.keys(config.servers)
            throw new CliError(`not logged in to ${server}: run cwo login --server ${server}${known.length ? ` (logged in to: ${known.join(', ')})` : ''}`)
          }
          config.current = server
        })
        ctx.note(`current server: ${server}`)
        if (ctx.io.env.CWO_SERVER && normalizeServer(ctx.io.env.CWO_SERVER) !== server) ctx.note(`note: CWO_SERVER=${ctx.io.env.CWO_SERVER} is set and takes precedence while it is`)
        return
      }
      const config = await readConfig(path)
      // Never the tokens: this is for reading on a screen or in a script's log.
      const servers = Object.entries(config.servers).map(([server, e]) => ({ server, email: e.email ?? null, saved_at: e.saved_at ?? null, current: server === config.current }))
      ctx.print({ current: config.current, servers }, () => table(servers, [
        { header: 'current', value: (s) => (s.current ? '*' : '') },
        { header: 'server', value: (s) => s.server },
        { header: 'email', value: (s) => s.email },
        { header: 'logged in', value: (s) => s.saved_at },
      ]))
      if (!servers.length && ctx.format === 'table') ctx.note('not logged in to any server: cwo login --server URL')
    })

  program.command('whoami')
    .description('who the token is for, on which server (checks the token)')
    .action(async () => {
      const s = await ctx.session()
      const me = await ok(s.server, s.client.GET('/v1/api/profile'))
      ctx.print(me, () => `${me.email} (${me.name}, ${me.role}) on ${s.server}\n`)
    })
}
