/**
 * Malformed requests against the real app on a real redis-server: every one is refused with the
 * documented status and error code, in the one JSON error shape, never a 5xx, and never touches Redis.
 */
import t from 'tap'
import type { OutgoingHttpHeaders } from 'node:http'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { toInject } from '../helpers/inject-row.js'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'

interface Row {
  /** What is wrong with the request. */
  name: string
  method: Method
  url: string
  headers?: OutgoingHttpHeaders
  /** A string is sent as is; anything else is JSON-encoded (with Content-Type: application/json unless given). */
  payload?: unknown
  status: number
  error: string
}

const HELD = 'held'
const HELD_TOKEN = 'held-token-0000000000000001'
const OTHER_TOKEN = 'other-token-000000000000002'
const SHORT_TOKEN = 'a'.repeat(15)
const LONG_TOKEN = 'b'.repeat(129)
const BAD_CHAR_TOKEN = 'bad.token!000000000000'

const json = { 'content-type': 'application/json' }
const holder = { 'lock-token': HELD_TOKEN }
const bigBody = JSON.stringify({ ttlMs: 1000, pad: 'x'.repeat(17 * 1024) })

const rows: Row[] = [
  // ── keys ───────────────────────────────────────────────────────────────────────────────────────
  { name: 'key with a space', method: 'POST', url: '/locks/a%20b', status: 400, error: 'invalid_request' },
  { name: 'key with {', method: 'GET', url: '/locks/a%7Bb', status: 400, error: 'invalid_request' },
  { name: 'key with }', method: 'POST', url: '/locks/a%7Db', status: 400, error: 'invalid_request' },
  {
    name: 'key wrapped in a hash tag {held}',
    method: 'DELETE',
    url: '/locks/%7Bheld%7D',
    headers: holder,
    status: 400,
    error: 'invalid_request',
  },
  { name: 'key with an encoded / (%2F)', method: 'POST', url: '/locks/a%2Fb', status: 400, error: 'invalid_request' },
  {
    name: 'key with *',
    method: 'DELETE',
    url: '/locks/a*b',
    headers: { 'lock-token': OTHER_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'key with unicode (été)',
    method: 'PUT',
    url: '/locks/%C3%A9t%C3%A9/renew',
    headers: { 'lock-token': OTHER_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  { name: 'key with an encoded # (%23)', method: 'GET', url: '/locks/a%23b', status: 400, error: 'invalid_request' },
  { name: 'key with %', method: 'POST', url: '/locks/a%25b', status: 400, error: 'invalid_request' },
  { name: 'key with a comma', method: 'POST', url: '/locks/a,b', status: 400, error: 'invalid_request' },
  { name: 'key with a NUL byte', method: 'GET', url: '/locks/a%00b', status: 400, error: 'invalid_request' },
  { name: 'empty key', method: 'POST', url: '/locks/', status: 400, error: 'invalid_request' },
  { name: 'empty key (release)', method: 'DELETE', url: `/locks/?token=${HELD_TOKEN}`, status: 400, error: 'invalid_request' },
  { name: 'key of 201 characters', method: 'POST', url: `/locks/${'k'.repeat(201)}`, status: 400, error: 'invalid_request' },
  {
    name: 'key of 201 characters (release)',
    method: 'DELETE',
    url: `/locks/${'k'.repeat(201)}?token=${OTHER_TOKEN}`,
    status: 400,
    error: 'invalid_request',
  },
  // Positive control: 200 characters is a valid key, so this is "not held", not "bad request".
  {
    name: 'key of 200 characters is valid (control: not held)',
    method: 'GET',
    url: `/locks/${'k'.repeat(200)}`,
    status: 404,
    error: 'lock_not_found',
  },

  // ── bodies ─────────────────────────────────────────────────────────────────────────────────────
  { name: 'truncated JSON', method: 'POST', url: '/locks/k', headers: json, payload: '{"ttlMs":', status: 400, error: 'invalid_request' },
  {
    name: 'JSON with a trailing comma',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    headers: json,
    payload: `{"token":"${HELD_TOKEN}",}`,
    status: 400,
    error: 'invalid_request',
  },
  { name: 'JSON null body', method: 'POST', url: '/locks/k', headers: json, payload: 'null', status: 400, error: 'invalid_request' },
  {
    name: 'JSON null body (release)',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    headers: { ...json, ...holder },
    payload: 'null',
    status: 400,
    error: 'invalid_request',
  },
  { name: 'JSON array body', method: 'POST', url: '/locks/k', headers: json, payload: '[]', status: 400, error: 'invalid_request' },
  {
    name: 'JSON number body',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    headers: { ...json, ...holder },
    payload: '42',
    status: 400,
    error: 'invalid_request',
  },
  { name: 'JSON string body', method: 'POST', url: '/locks/k', headers: json, payload: '"hello"', status: 400, error: 'invalid_request' },
  {
    name: 'JSON boolean body',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    headers: { ...json, ...holder },
    payload: 'true',
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'unknown body field (ttl instead of ttlMs)',
    method: 'POST',
    url: '/locks/k',
    payload: { ttl: 1000 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'unknown body field on renew',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    payload: { token: HELD_TOKEN, waitMs: 10 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'unknown body field on release',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    payload: { token: HELD_TOKEN, force: true },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'ttlMs on release (not a release field)',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    payload: { token: HELD_TOKEN, ttlMs: 1000 },
    status: 400,
    error: 'invalid_request',
  },

  // ── query parameters ───────────────────────────────────────────────────────────────────────────
  { name: 'unknown query parameter on acquire', method: 'POST', url: '/locks/k?foo=1', status: 400, error: 'invalid_request' },
  {
    name: 'body field name used as a query parameter (ttlMs)',
    method: 'POST',
    url: '/locks/k?ttlMs=1000',
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token as a query parameter on renew (DELETE only)',
    method: 'PUT',
    url: `/locks/${HELD}/renew?token=${HELD_TOKEN}`,
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'unknown query parameter on renew',
    method: 'PUT',
    url: `/locks/${HELD}/renew?force=1`,
    headers: holder,
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'unknown query parameter on release',
    method: 'DELETE',
    url: `/locks/${HELD}?force=1`,
    headers: holder,
    status: 400,
    error: 'invalid_request',
  },

  // ── ttlMs in the body ──────────────────────────────────────────────────────────────────────────
  { name: 'ttlMs as a string', method: 'POST', url: '/locks/k', payload: { ttlMs: '1000' }, status: 400, error: 'invalid_request' },
  { name: 'ttlMs a float', method: 'POST', url: '/locks/k', payload: { ttlMs: 1000.5 }, status: 400, error: 'invalid_request' },
  { name: 'ttlMs negative', method: 'POST', url: '/locks/k', payload: { ttlMs: -1000 }, status: 400, error: 'invalid_request' },
  { name: 'ttlMs 0', method: 'POST', url: '/locks/k', payload: { ttlMs: 0 }, status: 400, error: 'invalid_request' },
  { name: 'ttlMs 99 (below 100)', method: 'POST', url: '/locks/k', payload: { ttlMs: 99 }, status: 400, error: 'invalid_request' },
  { name: 'ttlMs above MAX_TTL_MS', method: 'POST', url: '/locks/k', payload: { ttlMs: 3_600_001 }, status: 400, error: 'invalid_request' },
  { name: 'ttlMs null', method: 'POST', url: '/locks/k', payload: { ttlMs: null }, status: 400, error: 'invalid_request' },
  {
    name: 'renew ttlMs 99',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    payload: { token: HELD_TOKEN, ttlMs: 99 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'renew ttlMs above MAX_TTL_MS',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    payload: { token: HELD_TOKEN, ttlMs: 3_600_001 },
    status: 400,
    error: 'invalid_request',
  },

  // ── ttl in the query ───────────────────────────────────────────────────────────────────────────
  { name: 'ttl=abc', method: 'POST', url: '/locks/k?ttl=abc', status: 400, error: 'invalid_request' },
  { name: 'ttl=-1s', method: 'POST', url: '/locks/k?ttl=-1s', status: 400, error: 'invalid_request' },
  { name: 'ttl=1.0001s (not whole ms)', method: 'POST', url: '/locks/k?ttl=1.0001s', status: 400, error: 'invalid_request' },
  { name: 'ttl=1d (unknown unit)', method: 'POST', url: '/locks/k?ttl=1d', status: 400, error: 'invalid_request' },
  { name: 'ttl= (empty)', method: 'POST', url: '/locks/k?ttl=', status: 400, error: 'invalid_request' },
  { name: 'ttl repeated (ttl=1&ttl=2)', method: 'POST', url: '/locks/k?ttl=1&ttl=2', status: 400, error: 'invalid_request' },
  { name: 'ttl=50 (below 100 ms)', method: 'POST', url: '/locks/k?ttl=50', status: 400, error: 'invalid_request' },
  { name: 'ttl=0', method: 'POST', url: '/locks/k?ttl=0', status: 400, error: 'invalid_request' },
  { name: 'ttl=2h (above MAX_TTL_MS)', method: 'POST', url: '/locks/k?ttl=2h', status: 400, error: 'invalid_request' },
  {
    name: 'renew ttl=50 (below 100 ms)',
    method: 'PUT',
    url: `/locks/${HELD}/renew?ttl=50`,
    headers: holder,
    status: 400,
    error: 'invalid_request',
  },
  { name: 'renew ttl=0', method: 'PUT', url: `/locks/${HELD}/renew?ttl=0`, headers: holder, status: 400, error: 'invalid_request' },
  {
    name: 'renew ttl=2h (above MAX_TTL_MS)',
    method: 'PUT',
    url: `/locks/${HELD}/renew?ttl=2h`,
    headers: holder,
    status: 400,
    error: 'invalid_request',
  },
  { name: 'inspect with an unknown query parameter', method: 'GET', url: `/locks/${HELD}?foo=1`, status: 400, error: 'invalid_request' },
  { name: 'renew ttl=abc', method: 'PUT', url: `/locks/${HELD}/renew?ttl=abc`, headers: holder, status: 400, error: 'invalid_request' },
  {
    name: 'ttl in query and body with different values',
    method: 'POST',
    url: '/locks/k?ttl=1s',
    payload: { ttlMs: 2000 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'renew ttl in query and body with different values',
    method: 'PUT',
    url: `/locks/${HELD}/renew?ttl=2m`,
    payload: { token: HELD_TOKEN, ttlMs: 60_000 },
    status: 400,
    error: 'invalid_request',
  },

  // ── tokens ─────────────────────────────────────────────────────────────────────────────────────
  {
    name: 'acquire token too short (body)',
    method: 'POST',
    url: '/locks/k',
    payload: { token: SHORT_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'acquire token too long (header)',
    method: 'POST',
    url: '/locks/k',
    headers: { 'lock-token': LONG_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'acquire token not a string (body)',
    method: 'POST',
    url: '/locks/k',
    payload: { token: 1234567890123456 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'renew token with bad characters (header)',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    headers: { 'lock-token': BAD_CHAR_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'renew token too long (body)',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    payload: { token: LONG_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'release token with bad characters (query)',
    method: 'DELETE',
    url: `/locks/${HELD}?token=${encodeURIComponent(BAD_CHAR_TOKEN)}`,
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'release token too short (body)',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    payload: { token: SHORT_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'release token too short (header)',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    headers: { 'lock-token': SHORT_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'acquire token in header and body differ',
    method: 'POST',
    url: '/locks/k',
    headers: { 'lock-token': OTHER_TOKEN },
    payload: { token: HELD_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'renew token in header and body differ',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    headers: holder,
    payload: { token: OTHER_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'release token in header and body differ',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    headers: holder,
    payload: { token: OTHER_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'release token in header and query differ',
    method: 'DELETE',
    url: `/locks/${HELD}?token=${OTHER_TOKEN}`,
    headers: holder,
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'release token in body and query differ',
    method: 'DELETE',
    url: `/locks/${HELD}?token=${HELD_TOKEN}`,
    payload: { token: OTHER_TOKEN },
    status: 400,
    error: 'invalid_request',
  },
  { name: 'renew with no token at all', method: 'PUT', url: `/locks/${HELD}/renew`, status: 400, error: 'invalid_request' },
  {
    name: 'renew with an empty body and no token',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    payload: {},
    status: 400,
    error: 'invalid_request',
  },
  { name: 'release with no token at all', method: 'DELETE', url: `/locks/${HELD}`, status: 400, error: 'invalid_request' },
  {
    name: 'release with an empty body and no token',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    payload: {},
    status: 400,
    error: 'invalid_request',
  },

  // ── reentrant ──────────────────────────────────────────────────────────────────────────────────
  { name: 'reentrant as a string', method: 'POST', url: '/locks/k', payload: { reentrant: 'true' }, status: 400, error: 'invalid_request' },
  {
    name: 'reentrant as a number',
    method: 'POST',
    url: `/locks/${HELD}`,
    headers: holder,
    payload: { reentrant: 1 },
    status: 400,
    error: 'invalid_request',
  },

  // ── size and content type ──────────────────────────────────────────────────────────────────────
  {
    name: 'acquire body over 16 KiB',
    method: 'POST',
    url: '/locks/k',
    headers: json,
    payload: bigBody,
    status: 413,
    error: 'payload_too_large',
  },
  {
    name: 'renew body over 16 KiB',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    headers: { ...json, ...holder },
    payload: bigBody,
    status: 413,
    error: 'payload_too_large',
  },
  {
    name: 'release body over 16 KiB',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    headers: { ...json, ...holder },
    payload: bigBody,
    status: 413,
    error: 'payload_too_large',
  },
  {
    name: 'text/plain body',
    method: 'POST',
    url: '/locks/k',
    headers: { 'content-type': 'text/plain' },
    payload: '{"ttlMs":1000}',
    status: 415,
    error: 'unsupported_media_type',
  },
  {
    name: 'form-urlencoded body',
    method: 'POST',
    url: '/locks/k',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'ttlMs=1000',
    status: 415,
    error: 'unsupported_media_type',
  },
  {
    name: 'form-urlencoded renew',
    method: 'PUT',
    url: `/locks/${HELD}/renew`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `token=${HELD_TOKEN}`,
    status: 415,
    error: 'unsupported_media_type',
  },
  {
    name: 'text/plain release',
    method: 'DELETE',
    url: `/locks/${HELD}`,
    headers: { 'content-type': 'text/plain' },
    payload: HELD_TOKEN,
    status: 415,
    error: 'unsupported_media_type',
  },
  {
    name: 'application/xml body',
    method: 'POST',
    url: '/locks/k',
    headers: { 'content-type': 'application/xml' },
    payload: '<ttlMs>1000</ttlMs>',
    status: 415,
    error: 'unsupported_media_type',
  },

  // ── semaphores ─────────────────────────────────────────────────────────────────────────────────
  { name: 'semaphore without a limit', method: 'POST', url: '/semaphores/s', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore without a limit (body with permits)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { permits: 1 },
    status: 400,
    error: 'invalid_request',
  },
  { name: 'semaphore limit=0', method: 'POST', url: '/semaphores/s?limit=0', status: 400, error: 'invalid_request' },
  { name: 'semaphore limit 0 (body)', method: 'POST', url: '/semaphores/s', payload: { limit: 0 }, status: 400, error: 'invalid_request' },
  { name: 'semaphore limit=-1', method: 'POST', url: '/semaphores/s?limit=-1', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore permits above the limit (query)',
    method: 'POST',
    url: '/semaphores/s?limit=2&permits=3',
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore permits above the limit (body)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: 2, permits: 3 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore permits above the limit (limit in the query, permits in the body)',
    method: 'POST',
    url: '/semaphores/s?limit=1',
    payload: { permits: 2 },
    status: 400,
    error: 'invalid_request',
  },
  { name: 'semaphore permits=0', method: 'POST', url: '/semaphores/s?limit=2&permits=0', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore permits -1 (body)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: 2, permits: -1 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore limit above MAX_SEMAPHORE_LIMIT (query)',
    method: 'POST',
    url: '/semaphores/s?limit=10001',
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore limit above MAX_SEMAPHORE_LIMIT (body)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: 10_001 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore limit of 20 digits',
    method: 'POST',
    url: '/semaphores/s?limit=99999999999999999999',
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore limit 1e20 (body)',
    method: 'POST',
    url: '/semaphores/s',
    headers: json,
    payload: '{"limit":1e20}',
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore permits 2^53 (body)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: 4, permits: 2 ** 53 },
    status: 400,
    error: 'invalid_request',
  },
  { name: 'semaphore limit=abc', method: 'POST', url: '/semaphores/s?limit=abc', status: 400, error: 'invalid_request' },
  { name: 'semaphore limit=2.5', method: 'POST', url: '/semaphores/s?limit=2.5', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore limit as a string (body)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: '4' },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore limit null (body)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: null },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore permits 1.5 (body)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: 4, permits: 1.5 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore permits true (body)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: 4, permits: true },
    status: 400,
    error: 'invalid_request',
  },
  { name: 'semaphore permits=two', method: 'POST', url: '/semaphores/s?limit=4&permits=two', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore limit repeated (limit=1&limit=2)',
    method: 'POST',
    url: '/semaphores/s?limit=1&limit=2',
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore limit in query and body differ',
    method: 'POST',
    url: '/semaphores/s?limit=3',
    payload: { limit: 4 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore permits in query and body differ',
    method: 'POST',
    url: '/semaphores/s?limit=4&permits=1',
    payload: { permits: 2 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore unknown body field (weight)',
    method: 'POST',
    url: '/semaphores/s',
    payload: { limit: 4, weight: 2 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore unknown query parameter (count)',
    method: 'POST',
    url: '/semaphores/s?limit=4&count=2',
    status: 400,
    error: 'invalid_request',
  },
  { name: 'semaphore bad ttl', method: 'POST', url: '/semaphores/s?limit=4&ttl=50', status: 400, error: 'invalid_request' },
  { name: 'semaphore key with a space', method: 'POST', url: '/semaphores/a%20b?limit=4', status: 400, error: 'invalid_request' },
  { name: 'semaphore key wrapped in a hash tag', method: 'GET', url: '/semaphores/%7Bs%7D', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore limit on renew (not a renew field)',
    method: 'PUT',
    url: '/semaphores/s/renew',
    payload: { token: HELD_TOKEN, limit: 4 },
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore limit on release (not a release field)',
    method: 'DELETE',
    url: '/semaphores/s?limit=4',
    headers: holder,
    status: 400,
    error: 'invalid_request',
  },
  { name: 'semaphore release without a token', method: 'DELETE', url: '/semaphores/s', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore force-release without a fence',
    method: 'DELETE',
    url: '/semaphores/s?force=true',
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'semaphore fence without force',
    method: 'DELETE',
    url: '/semaphores/s?fence=3',
    headers: holder,
    status: 400,
    error: 'invalid_request',
  },
  { name: 'semaphore inspect holds=maybe', method: 'GET', url: '/semaphores/s?holds=maybe', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore inspect with an unknown parameter',
    method: 'GET',
    url: '/semaphores/s?readers=true',
    status: 400,
    error: 'invalid_request',
  },
  { name: 'semaphore listing with limit=0', method: 'GET', url: '/semaphores?limit=0', status: 400, error: 'invalid_request' },
  {
    name: 'semaphore inspect of a free semaphore (control: not held)',
    method: 'GET',
    url: '/semaphores/free',
    status: 404,
    error: 'lock_not_found',
  },
  { name: 'PATCH on /semaphores/:key', method: 'PATCH', url: '/semaphores/s', status: 405, error: 'method_not_allowed' },

  // ── routes and methods ─────────────────────────────────────────────────────────────────────────
  { name: 'unknown route', method: 'GET', url: '/nope', status: 404, error: 'route_not_found' },
  { name: 'list with limit=0', method: 'GET', url: '/locks?limit=0', status: 400, error: 'invalid_request' },
  { name: 'list with an unknown parameter', method: 'GET', url: '/rwlocks?foo=1', status: 400, error: 'invalid_request' },
  { name: 'list with a bad cursor', method: 'GET', url: '/locks?cursor=abc', status: 400, error: 'invalid_request' },
  { name: 'force=maybe', method: 'DELETE', url: `/locks/${HELD}?force=maybe`, status: 400, error: 'invalid_request' },
  { name: 'fence without force', method: 'DELETE', url: `/locks/${HELD}?fence=3`, headers: holder, status: 400, error: 'invalid_request' },
  {
    name: 'force on a read hold without its fence',
    method: 'DELETE',
    url: '/rwlocks/k/read?force=true',
    status: 400,
    error: 'invalid_request',
  },
  { name: 'extra path segment', method: 'POST', url: '/locks/a/b', status: 404, error: 'route_not_found' },
  { name: 'singular /lock/:key', method: 'GET', url: `/lock/${HELD}`, status: 404, error: 'route_not_found' },
  {
    name: 'unknown route with a body',
    method: 'POST',
    url: '/v1/locks/k',
    payload: { ttlMs: 1000 },
    status: 404,
    error: 'route_not_found',
  },
  { name: 'PATCH on /locks/:key', method: 'PATCH', url: `/locks/${HELD}`, headers: holder, status: 405, error: 'method_not_allowed' },
  {
    name: 'PUT on /locks/:key (renew lives at /renew)',
    method: 'PUT',
    url: `/locks/${HELD}`,
    headers: holder,
    status: 405,
    error: 'method_not_allowed',
  },
  {
    name: 'POST on /locks/:key/renew',
    method: 'POST',
    url: `/locks/${HELD}/renew`,
    headers: holder,
    status: 405,
    error: 'method_not_allowed',
  },
  {
    name: 'DELETE on /locks/:key/renew',
    method: 'DELETE',
    url: `/locks/${HELD}/renew`,
    headers: holder,
    status: 405,
    error: 'method_not_allowed',
  },
  { name: 'GET on /locks/:key/renew', method: 'GET', url: `/locks/${HELD}/renew`, status: 405, error: 'method_not_allowed' },
]

/** Every token a row sends: none may come back in a response. */
const sentTokens = [HELD_TOKEN, OTHER_TOKEN, SHORT_TOKEN, LONG_TOKEN, BAD_CHAR_TOKEN]

t.test('the table has distinct rows covering every /locks route', async (t) => {
  t.ok(rows.length >= 35, `${rows.length} rows`)
  t.equal(new Set(rows.map((r) => r.name)).size, rows.length, 'row names are distinct')
  t.equal(new Set(rows.map((r) => JSON.stringify(toInject(r)))).size, rows.length, 'row requests are distinct')
  const routes = new Set(
    rows.map(
      (r) =>
        `${r.method} ${r.url.startsWith('/locks/') ? (r.url.split('?')[0]?.endsWith('/renew') ? '/locks/:key/renew' : '/locks/:key') : 'other'}`,
    ),
  )
  for (const route of ['POST /locks/:key', 'PUT /locks/:key/renew', 'DELETE /locks/:key', 'GET /locks/:key']) {
    t.ok(routes.has(route), `covers ${route}`)
  }
})

t.test('malformed requests are refused without touching Redis', async (t) => {
  const redis = await startRedis({ t })
  const { app, logText } = await startApp(t, [redis.url])

  const acquired = await app.inject({ method: 'POST', url: `/locks/${HELD}`, payload: { token: HELD_TOKEN, ttlMs: 600_000 } })
  t.equal(acquired.statusCode, 201, 'the held lock is granted')
  const grant = acquired.json<{ fence: number; token: string }>()
  t.equal(grant.token, HELD_TOKEN)
  const before = await redis.keys()
  t.ok(Object.keys(before).length > 0, 'the held lock is in Redis')

  for (const row of rows) {
    await t.test(`${row.method} ${row.url.length > 80 ? `${row.url.slice(0, 77)}...` : row.url} — ${row.name}`, async (t) => {
      const res = await app.inject(toInject(row))
      t.ok(res.statusCode < 500, `never a 5xx (got ${res.statusCode})`)
      t.equal(res.statusCode, row.status, 'status')
      t.match(res.headers['content-type'], /^application\/json/, 'JSON content type')
      let body: unknown
      t.doesNotThrow(() => {
        body = JSON.parse(res.body)
      }, 'the body is JSON')
      const parsed = errorSchema.safeParse(body)
      t.ok(parsed.success, `the error shape: ${parsed.success ? '' : parsed.error.message}`)
      const b = body as { error?: unknown; message?: unknown }
      t.equal(b.error, row.error, 'error code')
      t.type(b.message, 'string')
      t.ok(typeof b.message === 'string' && b.message.trim().length > 0, 'a non-empty message')
      for (const token of sentTokens) t.notOk(res.body.includes(token), `the body does not echo a token (${token.slice(0, 8)}…)`)
      t.same(await redis.keys(), before, 'Redis is untouched')
    })
  }

  await t.test('a well-formed token that does not hold the lock is 409 not_owner, not 400', async (t) => {
    const renew = await app.inject({ method: 'PUT', url: `/locks/${HELD}/renew`, headers: { 'lock-token': OTHER_TOKEN } })
    t.equal(renew.statusCode, 409)
    t.equal(renew.json().error, 'not_owner')
    t.ok(errorSchema.safeParse(renew.json()).success, 'error shape')
    const releaseBody = await app.inject({ method: 'DELETE', url: `/locks/${HELD}`, payload: { token: OTHER_TOKEN } })
    t.equal(releaseBody.statusCode, 409)
    t.equal(releaseBody.json().error, 'not_owner')
    const releaseQuery = await app.inject({ method: 'DELETE', url: `/locks/${HELD}?token=${OTHER_TOKEN}` })
    t.equal(releaseQuery.statusCode, 409)
    t.equal(releaseQuery.json().error, 'not_owner')
    for (const res of [renew, releaseBody, releaseQuery]) {
      t.notOk(res.body.includes(HELD_TOKEN), 'the holder token is not revealed')
      t.notOk(res.body.includes(OTHER_TOKEN), 'the sent token is not echoed')
    }
    t.same(await redis.keys(), before, 'Redis is untouched')
  })

  await t.test('GET /locks/held shows the hold but never its token', async (t) => {
    const res = await app.inject({ method: 'GET', url: `/locks/${HELD}` })
    t.equal(res.statusCode, 200)
    t.notOk(res.body.includes(HELD_TOKEN), 'no token in the body')
    const state = res.json<Record<string, unknown>>()
    t.notOk('token' in state, 'no token field')
    t.equal(state.key, HELD)
    t.equal(state.fence, grant.fence, 'the fence is the one granted')
    t.equal(state.holdCount, 1)
    const withToken = await app.inject({ method: 'GET', url: `/locks/${HELD}`, headers: holder })
    t.notOk(withToken.body.includes(HELD_TOKEN), 'not even when the holder asks')
    t.same(await redis.keys(), before, 'Redis is untouched')
  })

  await t.test('a key of exactly 200 characters can be acquired and released', async (t) => {
    const key = `${'k'.repeat(199)}z`
    t.equal(key.length, 200)
    const res = await app.inject({ method: 'POST', url: `/locks/${key}`, payload: { token: OTHER_TOKEN, ttlMs: 10_000 } })
    t.equal(res.statusCode, 201)
    t.equal(res.json().key, key)
    const released = await app.inject({ method: 'DELETE', url: `/locks/${key}`, headers: { 'lock-token': OTHER_TOKEN } })
    t.equal(released.statusCode, 200)
    t.same(released.json(), { key, released: true, holdCount: 0 })
  })

  t.notOk(logText().includes(HELD_TOKEN), 'the holder token never reaches the logs')
  t.notOk(logText().includes(OTHER_TOKEN), 'no sent token reaches the logs')
})
