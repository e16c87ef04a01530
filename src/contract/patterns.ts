/**
 * The shapes of what clients send, stated once: the HTTP schemas, the configuration and lockctl all
 * check against these.
 */

/** Lock-key characters (no braces: the service owns Redis hash tags). */
const KEY_CHARS = 'A-Za-z0-9._:@=+-'

export const lockKeyRule = {
  pattern: new RegExp(`^[${KEY_CHARS}]{1,200}$`),
  text: '1–200 characters from A-Z a-z 0-9 . _ - : @ = +',
}

/** A prefix of lock keys (listing filters, API key prefixes): the key characters, possibly empty. */
export const keyPrefixRule = {
  pattern: new RegExp(`^[${KEY_CHARS}]{0,200}$`),
  text: 'up to 200 characters from A-Z a-z 0-9 . _ - : @ = +',
}

/** KEY_PREFIX, the service's own prefix for its Redis keys. */
export const redisKeyPrefixRule = {
  pattern: new RegExp(`^[${KEY_CHARS}]{0,64}$`),
  text: 'up to 64 characters from A-Z a-z 0-9 . _ - : @ = + (no braces)',
}

export const tokenRule = {
  pattern: /^[A-Za-z0-9_-]{16,128}$/,
  text: '16–128 characters from A-Z a-z 0-9 _ -',
}

/** A whole number written in decimal digits (an optional minus sign for the configuration). */
export const wholeNumberPattern = /^-?\d{1,16}$/

/** An owner label (who holds it: shown by inspect, listings and a 409; not a secret): no control characters. */
export const ownerRule = {
  pattern: /^[^\p{C}]{1,200}$/u,
  text: '1–200 printable characters (no control characters)',
}

/** A session id (POST /sessions): "s." and 22 base64url characters. The '.' keeps it apart from tokens. */
export const sessionIdRule = {
  pattern: /^s\.[A-Za-z0-9_-]{22}$/,
  text: '"s." followed by 22 characters from A-Z a-z 0-9 _ - (as POST /sessions made it)',
}
