// A problem that stops the analysis as a whole. The message is shown to the user as is: it names the
// place in the file (a path such as services.web.ports[0]) and never carries a value from the file.
import { AppError } from '../../errors.ts'

export class ImportError extends AppError {
  constructor(message: string, statusCode = 400) {
    super(statusCode, message)
  }
}

/** The file (or an upload) is larger than the analysis reads: 413, so an upload route answers the same. */
export class ImportTooLarge extends ImportError {
  constructor(message: string) { super(message, 413) }
}
