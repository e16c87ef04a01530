import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type Bindings = Record<string, unknown>
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1]
/** Fastify's logger is pino's, which has isLevelEnabled (its type does not say so). */
type PinoLike = FastifyBaseLogger & { isLevelEnabled(level: string): boolean }

/**
 * A request's logger that becomes pino's child (with the request id) only when it first writes a
 * line: making a pino child serializes and redacts its bindings, which every request paid for while
 * at LOG_LEVEL=warn almost none of them writes anything. A line written looks exactly as a child's.
 */
class RequestLog implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: PinoLike,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options))
  }

  get level(): string {
    return this.made?.level ?? this.parent.level
  }

  set level(level: string) {
    this.real.level = level
  }

  isLevelEnabled(level: string): boolean {
    return this.made ? (this.made as PinoLike).isLevelEnabled(level) : this.parent.isLevelEnabled(level)
  }

  private write(level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return
    ;(this.real[level] as (...a: unknown[]) => void)(...args)
  }

  // Methods, not arrow-function fields: fields would be six closures made for every request.
  fatal(...args: unknown[]): void {
    this.write('fatal', args)
  }
  error(...args: unknown[]): void {
    this.write('error', args)
  }
  warn(...args: unknown[]): void {
    this.write('warn', args)
  }
  info(...args: unknown[]): void {
    this.write('info', args)
  }
  debug(...args: unknown[]): void {
    this.write('debug', args)
  }
  trace(...args: unknown[]): void {
    this.write('trace', args)
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options)
  }
}

/** Fastify's childLoggerFactory: a RequestLog per request (a route with its own log level: pino's child at once). */
export const requestLogFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  options.level !== undefined
    ? logger.child(bindings, options)
    : (new RequestLog(logger as PinoLike, bindings, options) as FastifyBaseLogger)
