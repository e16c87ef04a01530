import type { Readable } from 'node:stream'

/** Calls `onRecord` with each `separator`-terminated record of `stream`, read as UTF-8, as it arrives. */
export function readRecords(stream: Readable, separator: string, onRecord: (record: string) => void): void {
  let buffered = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    buffered += chunk
    let end: number
    while ((end = buffered.indexOf(separator)) >= 0) {
      const record = buffered.slice(0, end)
      buffered = buffered.slice(end + separator.length)
      onRecord(record)
    }
  })
}
