// The one error start-up gives when the data directory does not hold what it should. Its message is a
// single line an operator can act on: which file, where, and the command that salvages what is intact.

export class DataDirectoryDamagedError extends Error {
  constructor(readonly dir: string, readonly file: string, readonly detail: string, readonly offset?: number) {
    const where = offset === undefined ? file : `${file} at byte ${offset}`
    super(`data directory ${dir} is damaged: ${where}: ${detail}. Nothing was changed; stop the service and run \`npm run embedded-db -- repair ${dir}\` (it copies the directory aside first) to keep every intact record`)
    this.name = 'DataDirectoryDamagedError'
  }
}
