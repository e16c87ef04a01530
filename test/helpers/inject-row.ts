import type { OutgoingHttpHeaders } from 'node:http'
import type { InjectOptions } from 'fastify'

/** A bad-input row: a string payload is sent as is; anything else JSON-encoded (with its content type unless given). */
export interface RequestRow {
  method: InjectOptions['method']
  url: string
  headers?: OutgoingHttpHeaders
  payload?: unknown
}

/** The row as app.inject options. */
export function toInject(row: RequestRow) {
  const headers: OutgoingHttpHeaders = { ...row.headers }
  let payload: string | undefined
  if (typeof row.payload === 'string') payload = row.payload
  else if (row.payload !== undefined) {
    payload = JSON.stringify(row.payload)
    headers['content-type'] ??= 'application/json'
  }
  return { method: row.method, url: row.url, headers, ...(payload === undefined ? {} : { payload }) }
}
