/**
 * A text/event-stream (Server-Sent Events) split into its events as the chunks arrive, to the letter of
 * the format (any line break, comments, multi-line data, data left unparsed): the chaos observers must
 * not fall over on whatever a replica sends. (harness/event-stream.ts is the tests' simpler reader.)
 */

export interface StreamEvent {
  /** The `event:` field ('message' when absent). */
  event: string
  /** The `data:` lines, joined by newlines. */
  data: string
  /** The `id:` field, when given. */
  id?: string
}

/** Feed it the stream's text as it comes; each call returns the events completed by that chunk. */
export class EventStreamParser {
  #pending = ''
  #event = ''
  #data: string[] = []
  #id: string | undefined

  /** The last chunk ended in CR: a LF starting the next one belongs to that line break. */
  #afterCr = false

  push(chunk: string): StreamEvent[] {
    const events: StreamEvent[] = []
    const text = this.#afterCr && chunk.startsWith('\n') ? chunk.slice(1) : chunk
    this.#afterCr = text.endsWith('\r')
    const lines = (this.#pending + text).split(/\r\n|\r|\n/)
    // The last piece is an unfinished line (or '' after a line break): kept for the next chunk.
    this.#pending = lines.pop() ?? ''
    for (const line of lines) {
      if (line === '') {
        if (this.#data.length > 0 || this.#event !== '') {
          events.push({ event: this.#event || 'message', data: this.#data.join('\n'), ...(this.#id === undefined ? {} : { id: this.#id }) })
        }
        this.#event = ''
        this.#data = []
        continue
      }
      if (line.startsWith(':')) continue // a comment (keep-alive)
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') this.#event = value
      else if (field === 'data') this.#data.push(value)
      else if (field === 'id') this.#id = value
    }
    return events
  }
}
