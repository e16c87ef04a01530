// Generated from openapi.yaml by openapi-typescript: do not edit; `npm run client-types` regenerates it.
export interface paths {
  '/locks/{key}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Inspect a lock (never shows the token) */
    get: operations['inspectLock']
    put?: never
    /** Acquire an exclusive lock */
    post: operations['acquireLock']
    /** Release an exclusive lock (owner only) */
    delete: operations['releaseLock']
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/locks/{key}/renew': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    /** Extend an exclusive lock (owner only) */
    put: operations['renewLock']
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/locks': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Admin: list held locks (SCAN-based, paginated; never a token) */
    get: operations['listLocks']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks/{key}/read': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    put?: never
    /** Acquire a read hold */
    post: operations['acquireReadHold']
    /** Release a read hold (owner only) */
    delete: operations['releaseReadHold']
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks/{key}/read/renew': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    /** Extend a read hold (owner only) */
    put: operations['renewReadHold']
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks/{key}/write': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    put?: never
    /** Acquire a write hold */
    post: operations['acquireWriteHold']
    /** Release a write hold (owner only) */
    delete: operations['releaseWriteHold']
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks/{key}/write/renew': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    /** Extend a write hold (owner only) */
    put: operations['renewWriteHold']
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks/{key}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Inspect a read-write lock: writer, reader count, waiting writer, fence (never a token) */
    get: operations['inspectRwLock']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Admin: list held read-write locks (SCAN-based, paginated; never a token) */
    get: operations['listRwLocks']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/semaphores/{key}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Inspect a semaphore: limit, permits in use, holders, waiters (never a token) */
    get: operations['inspectSemaphore']
    put?: never
    /** Acquire a semaphore's permits */
    post: operations['acquirePermit']
    /** Release a semaphore's permits (owner only) */
    delete: operations['releasePermit']
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/semaphores/{key}/renew': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    /** Extend a semaphore's permits (owner only) */
    put: operations['renewPermit']
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/semaphores': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Admin: list held semaphores with each hold (SCAN-based, paginated; never a token) */
    get: operations['listSemaphores']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/sessions': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    put?: never
    /** Open a session: one lease for many holds (acquire with `session` to bind a hold to it) */
    post: operations['openSession']
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/sessions/{id}/keepalive': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    /** Renew a session and every hold bound to it; answers the holds it still has */
    put: operations['keepaliveSession']
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/sessions/{id}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** A session: its lease and the holds it has (never a token) */
    get: operations['inspectSession']
    put?: never
    post?: never
    /** End a session: every hold bound to it is released (handed to its waiters) */
    delete: operations['closeSession']
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/locks/{key}/watch': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Watch a hold: answers as soon as it is gone (why, when), or when the wait runs out (long poll, or SSE) */
    get: operations['watchLock']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks/{key}/read/watch': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Watch a hold: answers as soon as it is gone (why, when), or when the wait runs out (long poll, or SSE) */
    get: operations['watchReadHold']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks/{key}/write/watch': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Watch a hold: answers as soon as it is gone (why, when), or when the wait runs out (long poll, or SSE) */
    get: operations['watchWriteHold']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/semaphores/{key}/watch': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Watch a hold: answers as soon as it is gone (why, when), or when the wait runs out (long poll, or SSE) */
    get: operations['watchPermit']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/sessions/{id}/watch': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Watch a session: answers as soon as it is closed or lapses, or when the wait runs out (long poll, or SSE) */
    get: operations['watchSession']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/elections/{name}/campaign': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    put?: never
    /** Campaign for leadership: 201 once leader (waiting in line up to waitMs), 200 for the leader re-campaigning with its token */
    post: operations['campaign']
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/elections/{name}/proclaim': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    /** Proclaim a new value (the leader only): observers are told of it as the term's next revision */
    put: operations['proclaim']
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/elections/{name}/renew': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    get?: never
    /** Extend the leadership (the leader only; a session-bound leader is renewed by its keepalive) */
    put: operations['renewLeadership']
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/elections/{name}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Inspect an election: its leader (never a token), candidates in line, terms begun */
    get: operations['inspectElection']
    put?: never
    post?: never
    /** Resign (by the leader token): the term ends and the next candidate in line is elected */
    delete: operations['resign']
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/elections': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Admin: list elections that have a leader (SCAN-based, paginated; never a token) */
    get: operations['listElections']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/elections/{name}/observe': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Observe an election: long poll (answers when the state differs from after/revision) or Server-Sent Events */
    get: operations['observeElection']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/elections/{name}/watch': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Watch the leader's own hold: answers as soon as the leadership is lost (why, when), or when the wait runs out */
    get: operations['watchLeadership']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/locks/{key}/fence/{fence}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Check a fence: is it the lock's live fence now? (for resources that cannot store the highest fence) */
    get: operations['checkLockFence']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/rwlocks/{key}/fence/{fence}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Check a fence: is it a read or write hold's live fence now? (for resources that cannot store the highest fence) */
    get: operations['checkRwLockFence']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/semaphores/{key}/fence/{fence}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Check a fence: is it a permit hold's live fence now? (for resources that cannot store the highest fence) */
    get: operations['checkSemaphoreFence']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/elections/{name}/fence/{fence}': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Check a term: is it the current leader's? (for resources that cannot store the highest term) */
    get: operations['checkElectionTerm']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/healthz': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Liveness: the process answers */
    get: operations['getHealth']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/readyz': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Readiness: a majority of Redis nodes answers and may vote (per-node detail) */
    get: operations['getReadiness']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/metrics': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** Prometheus text exposition (needs an API key with PROTECT_METRICS=true) */
    get: operations['getMetrics']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
  '/openapi.yaml': {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** This contract, as OpenAPI 3 */
    get: operations['getOpenApi']
    put?: never
    post?: never
    delete?: never
    options?: never
    head?: never
    patch?: never
    trace?: never
  }
}
export type webhooks = Record<string, never>
export interface components {
  schemas: {
    Error: {
      /** @enum {string} */
      error:
        | 'invalid_request'
        | 'unauthorized'
        | 'forbidden'
        | 'lock_not_found'
        | 'session_not_found'
        | 'route_not_found'
        | 'method_not_allowed'
        | 'request_timeout'
        | 'lock_held'
        | 'lock_delayed'
        | 'not_owner'
        | 'upgrade_not_supported'
        | 'limit_mismatch'
        | 'permits_mismatch'
        | 'payload_too_large'
        | 'uri_too_long'
        | 'unsupported_media_type'
        | 'too_many_waiters'
        | 'too_many_readers'
        | 'too_many_holds'
        | 'too_many_sessions'
        | 'too_many_watchers'
        | 'rate_limited'
        | 'too_many_streams'
        | 'headers_too_large'
        | 'backend_unavailable'
        | 'shutting_down'
        | 'internal_error'
        | 'client_gone'
      message: string
      key?: string
      retryAfterMs?: number
      /** @description How long the request waited in line before giving up */
      waitedMs?: number
      /** @description 409 lock_delayed, and 404 on inspect: ISO 8601 time at which the running lock-delay ends (retryAfterMs adds jitter) */
      delayedUntil?: string
      /** @description 409 lock_held: the owner labels of the holds in the way (those that have one; at most 10; absent when none has one) */
      owners?: string[]
      /** @description 409 lock_held on a campaign: the current leader (null: a term is starting) */
      leader?: {
        candidate: string
        term: number
        since: string
      } | null
      /** @description 409 limit_mismatch: the semaphore's limit; 429 rate_limited: requests per second allowed; 429 too_many_streams: streams allowed */
      limit?: number
      /** @description 429 rate_limited: the most requests at once after an idle spell */
      burst?: number
      issues?: {
        path: string
        message: string
      }[]
      /** @description 405: the methods this path takes (also in the Allow header) */
      allow?: string[]
      /** @description 503 backend_unavailable: why — no_majority; validity_expired (the nodes answered too slowly, or this replica was stopped or starved between deciding a grant and answering it: a new hold is released, nothing is held); fence_not_stored */
      reason?: string
      /** @description Nodes that answered */
      answered?: number
      /** @description Nodes that answered and may vote (the vote rule) */
      voting?: number
      /** @description Votes a decision needs (a majority) */
      needed?: number
      nodes?: {
        index: number
        /** @description host:port (never a password) */
        address: string
        up: boolean
        /** @description latency of the last successful command, ms */
        latencyMs: number | null
        /**
         * @description Whether the answers of this node count toward a majority now (counts), or why not: not connected, not yet identified, a replica, in its quarantine after a restart, or its clock misbehaved
         * @enum {string}
         */
        vote: 'counts' | 'down' | 'identifying' | 'replica' | 'quarantined' | 'clock_untrusted'
        /** @description ms until a node that restarted recently counts toward grants again (0: it counts) */
        quarantineMs: number
        /** @description When the node last started anew (its run_id changed) since this replica met it: its holds may be gone; or null */
        restartedAt: string | null
        /** @description How the node's clock compares with this replica's monotonic clock (sampled every second) */
        clock: {
          /** @enum {string} */
          state: 'unknown' | 'trusted' | 'untrusted'
          /** @description the node's clock rate against this replica's (1 = same speed; null until two samples) */
          rate: number | null
          /** @description ms until an untrusted clock counts again if it keeps behaving (0: trusted) */
          trustedInMs: number
        }
        /** @description The latest failure talking to this node (kept after it recovers; compare `at`), or null */
        lastError: {
          /**
           * @description auth (NOAUTH, WRONGPASS, NOPERM), refused, timeout, not_redis (the port speaks another protocol), replica, tls, other
           * @enum {string}
           */
          reason: 'auth' | 'refused' | 'timeout' | 'not_redis' | 'replica' | 'tls' | 'other'
          /** @description What failed, in one sentence (never a password) */
          message: string
          /** @description ISO 8601 time of the failure */
          at: string
        } | null
        answered: boolean
      }[]
    }
  }
  responses: never
  parameters: never
  requestBodies: never
  headers: {
    /** @description The request id: the X-Request-Id the client sent (1–64 characters from A-Z a-z 0-9 . _ : -) or a new one, unique to the request; also in the log line of the request */
    'X-Request-Id': string
    /** @description Whole seconds (at least 1) to wait before retrying: with lock_held (when the holds lapse), too_many_waiters, backend_unavailable and shutting_down */
    'Retry-After': number
  }
  pathItems: never
}
export type $defs = Record<string, never>
export interface operations {
  inspectLock: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Held */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive'
            fence: number
            remainingMs: number
            holdCount: number
            waiters: number
            /** @description The hold's owner label, when it was given one */
            owner?: string
            /** @description ISO 8601 time until which a lock-delay keeps new holds out (a hold ended without its holder's release); absent when none runs */
            delayedUntil?: string
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  acquireLock: {
    parameters: {
      query?: {
        /** @description Lease length (as ttlMs): 1500, 1500ms, 1.5s, 2m, 1h. Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder keeps its latest TTL */
        ttl?: string
        /** @description wait: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 0ms … MAX_WAIT_MS */
        wait?: string
        /** @description The hold's owner label (as the body's owner): 1–200 printable characters (no control characters) */
        owner?: string
        /** @description Bind the hold to this session (as the body's session) */
        session?: string
        /** @description The hold's lock-delay (as lockDelayMs): 0, 500ms, 5s; 0 … MAX_LOCK_DELAY_MS (60000 ms) */
        lockDelay?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Lease length in ms, 100 … MAX_TTL_MS (3600000). Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder without it keeps the TTL of its latest grant or renew (as renew does) */
          ttlMs?: number
          /** @description How long to wait in line when the lock is held, ms (0: try once; at most MAX_WAIT_MS, 60000) */
          waitMs?: number
          /** @description Caller-chosen owner token; the server makes a 128-bit random one when absent */
          token?: string
          /** @description When this token already holds the lock: count +1 instead of an idempotent re-grant */
          reentrant?: boolean
          /** @description Who holds it, e.g. billing-worker-3: 1–200 printable characters (no control characters). Shown by inspect, listings and a 409; not a secret */
          owner?: string
          /** @description Bind the hold to this session (POST /sessions): its lease is the session's, renewed by the session's keepalive, freed with the session. ttlMs, if given, must be the session's TTL */
          session?: string
          /** @description Lock-delay in ms, 0 … MAX_LOCK_DELAY_MS (60000): after this hold ends without its holder's release (it expired, was force-released, or its session lapsed), what it freed is granted to nobody for this long (409 lock_delayed meanwhile; waiters are served when it ends). 0 (the default) means none */
          lockDelayMs?: number
        }
      }
    }
    responses: {
      /** @description Re-granted to the token that already held it */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description Granted: a new hold */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_waiters | too_many_holds | rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  releaseLock: {
    parameters: {
      query?: {
        /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
        token?: string
        /** @description Admin: drop the hold whoever holds it (no token needed) */
        force?: 'true' | 'false'
        /** @description With force on a read hold or a semaphore: the fence of the hold to drop */
        fence?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
          token?: string
        }
      }
    }
    responses: {
      /** @description Released, or one reentrant hold dropped */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @description true when the lock is free; false while a reentrant hold still has holds */
            released: boolean
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  renewLock: {
    parameters: {
      query?: {
        /** @description ttl: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 100ms … MAX_TTL_MS */
        ttl?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token (or the Lock-Token header) */
          token?: string
          /** @description New lease length in ms; default: the TTL of the latest grant or renew */
          ttlMs?: number
        }
      }
    }
    responses: {
      /** @description Renewed */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  listLocks: {
    parameters: {
      query?: {
        /** @description Only keys that start with this */
        prefix?: string
        /** @description Stop scanning once this many are found (default 100; a page may hold a few more) */
        limit?: string
        cursor?: string
      }
      header?: never
      path?: never
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            items: {
              key: string
              /** @enum {string} */
              mode: 'exclusive'
              fence: number
              remainingMs: number
              holdCount: number
              waiters: number
              /** @description The hold's owner label, when it was given one */
              owner?: string
              /** @description ISO 8601 time until which a lock-delay keeps new holds out (a hold ended without its holder's release); absent when none runs */
              delayedUntil?: string
            }[]
            /** @description Pass it back for the next page; null: the scan is complete */
            cursor: string | null
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  acquireReadHold: {
    parameters: {
      query?: {
        /** @description Lease length (as ttlMs): 1500, 1500ms, 1.5s, 2m, 1h. Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder keeps its latest TTL */
        ttl?: string
        /** @description wait: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 0ms … MAX_WAIT_MS */
        wait?: string
        /** @description The hold's owner label (as the body's owner): 1–200 printable characters (no control characters) */
        owner?: string
        /** @description Bind the hold to this session (as the body's session) */
        session?: string
        /** @description The hold's lock-delay (as lockDelayMs): 0, 500ms, 5s; 0 … MAX_LOCK_DELAY_MS (60000 ms) */
        lockDelay?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Lease length in ms, 100 … MAX_TTL_MS (3600000). Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder without it keeps the TTL of its latest grant or renew (as renew does) */
          ttlMs?: number
          /** @description How long to wait in line when the lock is held, ms (0: try once; at most MAX_WAIT_MS, 60000) */
          waitMs?: number
          /** @description Caller-chosen owner token; the server makes a 128-bit random one when absent */
          token?: string
          /** @description When this token already holds the lock: count +1 instead of an idempotent re-grant */
          reentrant?: boolean
          /** @description Who holds it, e.g. billing-worker-3: 1–200 printable characters (no control characters). Shown by inspect, listings and a 409; not a secret */
          owner?: string
          /** @description Bind the hold to this session (POST /sessions): its lease is the session's, renewed by the session's keepalive, freed with the session. ttlMs, if given, must be the session's TTL */
          session?: string
          /** @description Lock-delay in ms, 0 … MAX_LOCK_DELAY_MS (60000): after this hold ends without its holder's release (it expired, was force-released, or its session lapsed), what it freed is granted to nobody for this long (409 lock_delayed meanwhile; waiters are served when it ends). 0 (the default) means none */
          lockDelayMs?: number
        }
      }
    }
    responses: {
      /** @description Re-granted to the token that already held it */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description Granted: a new hold */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_waiters | too_many_readers | too_many_holds | rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  releaseReadHold: {
    parameters: {
      query?: {
        /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
        token?: string
        /** @description Admin: drop the hold whoever holds it (no token needed) */
        force?: 'true' | 'false'
        /** @description With force on a read hold or a semaphore: the fence of the hold to drop */
        fence?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
          token?: string
        }
      }
    }
    responses: {
      /** @description Released, or one reentrant hold dropped */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @description true when the lock is free; false while a reentrant hold still has holds */
            released: boolean
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  renewReadHold: {
    parameters: {
      query?: {
        /** @description ttl: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 100ms … MAX_TTL_MS */
        ttl?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token (or the Lock-Token header) */
          token?: string
          /** @description New lease length in ms; default: the TTL of the latest grant or renew */
          ttlMs?: number
        }
      }
    }
    responses: {
      /** @description Renewed */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  acquireWriteHold: {
    parameters: {
      query?: {
        /** @description Lease length (as ttlMs): 1500, 1500ms, 1.5s, 2m, 1h. Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder keeps its latest TTL */
        ttl?: string
        /** @description wait: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 0ms … MAX_WAIT_MS */
        wait?: string
        /** @description The hold's owner label (as the body's owner): 1–200 printable characters (no control characters) */
        owner?: string
        /** @description Bind the hold to this session (as the body's session) */
        session?: string
        /** @description The hold's lock-delay (as lockDelayMs): 0, 500ms, 5s; 0 … MAX_LOCK_DELAY_MS (60000 ms) */
        lockDelay?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Lease length in ms, 100 … MAX_TTL_MS (3600000). Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder without it keeps the TTL of its latest grant or renew (as renew does) */
          ttlMs?: number
          /** @description How long to wait in line when the lock is held, ms (0: try once; at most MAX_WAIT_MS, 60000) */
          waitMs?: number
          /** @description Caller-chosen owner token; the server makes a 128-bit random one when absent */
          token?: string
          /** @description When this token already holds the lock: count +1 instead of an idempotent re-grant */
          reentrant?: boolean
          /** @description Who holds it, e.g. billing-worker-3: 1–200 printable characters (no control characters). Shown by inspect, listings and a 409; not a secret */
          owner?: string
          /** @description Bind the hold to this session (POST /sessions): its lease is the session's, renewed by the session's keepalive, freed with the session. ttlMs, if given, must be the session's TTL */
          session?: string
          /** @description Lock-delay in ms, 0 … MAX_LOCK_DELAY_MS (60000): after this hold ends without its holder's release (it expired, was force-released, or its session lapsed), what it freed is granted to nobody for this long (409 lock_delayed meanwhile; waiters are served when it ends). 0 (the default) means none */
          lockDelayMs?: number
        }
      }
    }
    responses: {
      /** @description Re-granted to the token that already held it */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description Granted: a new hold */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_waiters | too_many_holds | rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  releaseWriteHold: {
    parameters: {
      query?: {
        /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
        token?: string
        /** @description Admin: drop the hold whoever holds it (no token needed) */
        force?: 'true' | 'false'
        /** @description With force on a read hold or a semaphore: the fence of the hold to drop */
        fence?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
          token?: string
        }
      }
    }
    responses: {
      /** @description Released, or one reentrant hold dropped */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @description true when the lock is free; false while a reentrant hold still has holds */
            released: boolean
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  renewWriteHold: {
    parameters: {
      query?: {
        /** @description ttl: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 100ms … MAX_TTL_MS */
        ttl?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token (or the Lock-Token header) */
          token?: string
          /** @description New lease length in ms; default: the TTL of the latest grant or renew */
          ttlMs?: number
        }
      }
    }
    responses: {
      /** @description Renewed */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'exclusive' | 'read' | 'write'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  inspectRwLock: {
    parameters: {
      query?: {
        /** @description Admin: also list each read hold (fence, remaining time, count), e.g. to force-release one by fence */
        readers?: 'true' | 'false'
      }
      header?: never
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Held by a writer or by readers */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @description The write hold, or null */
            writer: {
              fence: number
              remainingMs: number
              /** @description The hold's owner label, when it was given one */
              owner?: string
            } | null
            /** @description Live read holds */
            readers: number
            /** @description Admin views only (the listing, and inspect with ?readers=true): each live read hold, by fence; never its token */
            readerHolds?: {
              /** @description Its fence: what DELETE /rwlocks/{key}/read?force=true&fence= takes */
              fence: number
              remainingMs: number
              holdCount: number
              /** @description The hold's owner label, when it was given one */
              owner?: string
            }[]
            /** @description A writer is waiting: newly arriving readers queue behind it */
            writerWaiting: boolean
            waiters: number
            /** @description The owner labels of the live holds that have one (the writer first), at most 10; absent when none has one */
            owners?: string[]
            /** @description ISO 8601 time until which a lock-delay keeps new holds out (a hold ended without its holder's release); absent when none runs */
            delayedUntil?: string
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  listRwLocks: {
    parameters: {
      query?: {
        /** @description Only keys that start with this */
        prefix?: string
        /** @description Stop scanning once this many are found (default 100; a page may hold a few more) */
        limit?: string
        cursor?: string
      }
      header?: never
      path?: never
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            items: {
              key: string
              /** @description The write hold, or null */
              writer: {
                fence: number
                remainingMs: number
                /** @description The hold's owner label, when it was given one */
                owner?: string
              } | null
              /** @description Live read holds */
              readers: number
              /** @description Admin views only (the listing, and inspect with ?readers=true): each live read hold, by fence; never its token */
              readerHolds?: {
                /** @description Its fence: what DELETE /rwlocks/{key}/read?force=true&fence= takes */
                fence: number
                remainingMs: number
                holdCount: number
                /** @description The hold's owner label, when it was given one */
                owner?: string
              }[]
              /** @description A writer is waiting: newly arriving readers queue behind it */
              writerWaiting: boolean
              waiters: number
              /** @description The owner labels of the live holds that have one (the writer first), at most 10; absent when none has one */
              owners?: string[]
              /** @description ISO 8601 time until which a lock-delay keeps new holds out (a hold ended without its holder's release); absent when none runs */
              delayedUntil?: string
            }[]
            cursor: string | null
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  inspectSemaphore: {
    parameters: {
      query?: {
        /** @description Admin: also list each hold (fence, permits, remaining time, count), e.g. to force-release one by fence */
        holds?: 'true' | 'false'
      }
      header?: never
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Held, or waited for */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @description Fixed while anyone holds or waits */
            limit: number
            /** @description Permits the live holds take */
            permitsInUse: number
            /** @description Live holds */
            holders: number
            waiters: number
            /** @description The owner labels of the live holds that have one (the writer first), at most 10; absent when none has one */
            owners?: string[]
            /** @description ISO 8601 time until which a lock-delay keeps new holds out (a hold ended without its holder's release); absent when none runs */
            delayedUntil?: string
            /** @description Admin views only (the listing, and inspect with ?holds=true): each live hold, by fence; never its token */
            holds?: {
              /** @description Its fence: what DELETE /semaphores/{key}?force=true&fence= takes */
              fence: number
              permits: number
              remainingMs: number
              holdCount: number
              /** @description The hold's owner label, when it was given one */
              owner?: string
            }[]
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  acquirePermit: {
    parameters: {
      query?: {
        /** @description Lease length (as ttlMs): 1500, 1500ms, 1.5s, 2m, 1h. Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder keeps its latest TTL */
        ttl?: string
        /** @description wait: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 0ms … MAX_WAIT_MS */
        wait?: string
        /** @description The hold's owner label (as the body's owner): 1–200 printable characters (no control characters) */
        owner?: string
        /** @description Bind the hold to this session (as the body's session) */
        session?: string
        /** @description The hold's lock-delay (as lockDelayMs): 0, 500ms, 5s; 0 … MAX_LOCK_DELAY_MS (60000 ms) */
        lockDelay?: string
        /** @description The semaphore's limit: how many permits its holds may take in all. Required (as ?limit= or the body's limit); fixed while anyone holds or waits (another value: 409 limit_mismatch). 1 … MAX_SEMAPHORE_LIMIT (10000) */
        limit?: string
        /** @description Permits this hold takes (a weighted hold): default 1, at most the limit; a re-acquire by the holder asks for the same number. 1 … MAX_SEMAPHORE_LIMIT (10000) */
        permits?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Lease length in ms, 100 … MAX_TTL_MS (3600000). Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder without it keeps the TTL of its latest grant or renew (as renew does) */
          ttlMs?: number
          /** @description How long to wait in line when the lock is held, ms (0: try once; at most MAX_WAIT_MS, 60000) */
          waitMs?: number
          /** @description Caller-chosen owner token; the server makes a 128-bit random one when absent */
          token?: string
          /** @description When this token already holds the lock: count +1 instead of an idempotent re-grant */
          reentrant?: boolean
          /** @description Who holds it, e.g. billing-worker-3: 1–200 printable characters (no control characters). Shown by inspect, listings and a 409; not a secret */
          owner?: string
          /** @description Bind the hold to this session (POST /sessions): its lease is the session's, renewed by the session's keepalive, freed with the session. ttlMs, if given, must be the session's TTL */
          session?: string
          /** @description Lock-delay in ms, 0 … MAX_LOCK_DELAY_MS (60000): after this hold ends without its holder's release (it expired, was force-released, or its session lapsed), what it freed is granted to nobody for this long (409 lock_delayed meanwhile; waiters are served when it ends). 0 (the default) means none */
          lockDelayMs?: number
          /** @description The semaphore's limit: how many permits its holds may take in all. Required (as ?limit= or the body's limit); fixed while anyone holds or waits (another value: 409 limit_mismatch). 1 … MAX_SEMAPHORE_LIMIT (10000) */
          limit?: number
          /** @description Permits this hold takes (a weighted hold): default 1, at most the limit; a re-acquire by the holder asks for the same number. 1 … MAX_SEMAPHORE_LIMIT (10000) */
          permits?: number
        }
      }
    }
    responses: {
      /** @description Re-granted to the token that already held it */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'permit'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
            /** @description The permits this hold takes */
            permits: number
            /** @description The semaphore's limit (fixed while anyone holds or waits) */
            limit: number
          }
        }
      }
      /** @description Granted: a new hold */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'permit'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
            /** @description The permits this hold takes */
            permits: number
            /** @description The semaphore's limit (fixed while anyone holds or waits) */
            limit: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_waiters | too_many_holds | rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  releasePermit: {
    parameters: {
      query?: {
        /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
        token?: string
        /** @description Admin: drop the hold whoever holds it (no token needed) */
        force?: 'true' | 'false'
        /** @description With force on a read hold or a semaphore: the fence of the hold to drop */
        fence?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
          token?: string
        }
      }
    }
    responses: {
      /** @description Released, or one reentrant hold dropped */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @description true when the lock is free; false while a reentrant hold still has holds */
            released: boolean
            holdCount: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  renewPermit: {
    parameters: {
      query?: {
        /** @description ttl: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 100ms … MAX_TTL_MS */
        ttl?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token (or the Lock-Token header) */
          token?: string
          /** @description New lease length in ms; default: the TTL of the latest grant or renew */
          ttlMs?: number
        }
      }
    }
    responses: {
      /** @description Renewed */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            key: string
            /** @enum {string} */
            mode: 'permit'
            /** @description The owner token: keep it to renew and release */
            token: string
            /** @description Fencing token: strictly greater than every fence issued before for this key */
            fence: number
            ttlMs: number
            /** @description How long the holder may safely act: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which Redis drops the hold (grant time + ttlMs) */
            expiresAt: string
            holdCount: number
            /** @description The permits this hold takes */
            permits: number
            /** @description The semaphore's limit (fixed while anyone holds or waits) */
            limit: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  listSemaphores: {
    parameters: {
      query?: {
        /** @description Only keys that start with this */
        prefix?: string
        /** @description Stop scanning once this many are found (default 100; a page may hold a few more) */
        limit?: string
        cursor?: string
      }
      header?: never
      path?: never
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            items: {
              key: string
              /** @description Fixed while anyone holds or waits */
              limit: number
              /** @description Permits the live holds take */
              permitsInUse: number
              /** @description Live holds */
              holders: number
              waiters: number
              /** @description The owner labels of the live holds that have one (the writer first), at most 10; absent when none has one */
              owners?: string[]
              /** @description ISO 8601 time until which a lock-delay keeps new holds out (a hold ended without its holder's release); absent when none runs */
              delayedUntil?: string
              /** @description Admin views only (the listing, and inspect with ?holds=true): each live hold, by fence; never its token */
              holds?: {
                /** @description Its fence: what DELETE /semaphores/{key}?force=true&fence= takes */
                fence: number
                permits: number
                remainingMs: number
                holdCount: number
                /** @description The hold's owner label, when it was given one */
                owner?: string
              }[]
            }[]
            cursor: string | null
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  openSession: {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description The session's lease in ms (default DEFAULT_TTL_MS), 100 … MAX_TTL_MS (3600000); each keepalive renews it */
          ttlMs?: number
          /** @description The owner label of the session's holds that have none of their own */
          owner?: string
          /** @description The lock-delay of the session's holds that give none of their own, ms (0 … MAX_LOCK_DELAY_MS; default 0). Closing the session (DELETE) is its holder's release: no delay; a session that lapses starts its holds' delays */
          lockDelayMs?: number
        }
      }
    }
    responses: {
      /** @description Opened */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description The session id: a secret (keep it like a token); send it as `session` with an acquire */
            id: string
            ttlMs: number
            /** @description ISO 8601 time at which the session lapses unless kept alive */
            expiresAt: string
            owner?: string
            /** @description The lock-delay of the session's holds that give none of their own (0: none) */
            lockDelayMs: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_sessions | rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  keepaliveSession: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Session id (a secret, like a token): "s." followed by 22 characters from A-Z a-z 0-9 _ - (as POST /sessions made it) */
        id: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': Record<string, never>
      }
    }
    responses: {
      /** @description Renewed */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            ttlMs: number
            expiresAt: string
            /** @description How long the holds may safely be acted on: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description The holds the session still has, each renewed for ttlMs */
            holds: {
              key: string
              /**
               * @description Which hold: /locks (exclusive), /rwlocks read or write, /semaphores (permit)
               * @enum {string}
               */
              kind: 'exclusive' | 'read' | 'write' | 'permit' | 'leader'
              fence: number
              remainingMs: number
            }[]
            /** @description Holds bound to it that it no longer has (released, expired, force-released) or that could not be renewed */
            lost: {
              key: string
              /**
               * @description Which hold: /locks (exclusive), /rwlocks read or write, /semaphores (permit)
               * @enum {string}
               */
              kind: 'exclusive' | 'read' | 'write' | 'permit' | 'leader'
            }[]
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  inspectSession: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Session id (a secret, like a token): "s." followed by 22 characters from A-Z a-z 0-9 _ - (as POST /sessions made it) */
        id: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Live */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            ttlMs: number
            expiresAt: string
            remainingMs: number
            owner?: string
            holds: {
              key: string
              /**
               * @description Which hold: /locks (exclusive), /rwlocks read or write, /semaphores (permit)
               * @enum {string}
               */
              kind: 'exclusive' | 'read' | 'write' | 'permit' | 'leader'
              fence: number
              remainingMs: number
            }[]
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  closeSession: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Session id (a secret, like a token): "s." followed by 22 characters from A-Z a-z 0-9 _ - (as POST /sessions made it) */
        id: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': Record<string, never>
      }
    }
    responses: {
      /** @description Closed */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @enum {boolean} */
            closed: true
            holds: {
              key: string
              /**
               * @description Which hold: /locks (exclusive), /rwlocks read or write, /semaphores (permit)
               * @enum {string}
               */
              kind: 'exclusive' | 'read' | 'write' | 'permit' | 'leader'
              /** @description false: it had already gone */
              released: boolean
            }[]
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  watchLock: {
    parameters: {
      query?: {
        /** @description The hold's token (or the Lock-Token header) */
        token?: string
        /** @description How long to wait for the hold to go (default 30 s, at most MAX_WATCH_MS, 10 min by default): 1500, 1500ms, 1.5s, 2m */
        wait?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description With Accept: text/event-stream, the same as Server-Sent Events: `held` events, then one `lost` event (or the stream ends when the wait runs out) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description false: the hold (or session) is gone; true: still held when the wait ran out */
            held: boolean
            /**
             * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
             * @enum {string}
             */
            reason?: 'expired' | 'released' | 'force_released' | 'session_lost'
            /** @description held false: when it went (ISO 8601) */
            at?: string
            /** @description held true: its remaining lease */
            remainingMs?: number
          }
          'text/event-stream':
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'held'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: true
                  /** @description held true: its remaining lease */
                  remainingMs: number
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'lost'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: false
                  /**
                   * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
                   * @enum {string}
                   */
                  reason: 'expired' | 'released' | 'force_released' | 'session_lost'
                  /** @description held false: when it went (ISO 8601) */
                  at: string
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'error'
                /** @description The data: line, one JSON object */
                data: components['schemas']['Error']
              }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_watchers | rate_limited | too_many_streams */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  watchReadHold: {
    parameters: {
      query?: {
        /** @description The hold's token (or the Lock-Token header) */
        token?: string
        /** @description How long to wait for the hold to go (default 30 s, at most MAX_WATCH_MS, 10 min by default): 1500, 1500ms, 1.5s, 2m */
        wait?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description With Accept: text/event-stream, the same as Server-Sent Events: `held` events, then one `lost` event (or the stream ends when the wait runs out) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description false: the hold (or session) is gone; true: still held when the wait ran out */
            held: boolean
            /**
             * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
             * @enum {string}
             */
            reason?: 'expired' | 'released' | 'force_released' | 'session_lost'
            /** @description held false: when it went (ISO 8601) */
            at?: string
            /** @description held true: its remaining lease */
            remainingMs?: number
          }
          'text/event-stream':
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'held'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: true
                  /** @description held true: its remaining lease */
                  remainingMs: number
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'lost'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: false
                  /**
                   * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
                   * @enum {string}
                   */
                  reason: 'expired' | 'released' | 'force_released' | 'session_lost'
                  /** @description held false: when it went (ISO 8601) */
                  at: string
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'error'
                /** @description The data: line, one JSON object */
                data: components['schemas']['Error']
              }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_watchers | rate_limited | too_many_streams */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  watchWriteHold: {
    parameters: {
      query?: {
        /** @description The hold's token (or the Lock-Token header) */
        token?: string
        /** @description How long to wait for the hold to go (default 30 s, at most MAX_WATCH_MS, 10 min by default): 1500, 1500ms, 1.5s, 2m */
        wait?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description With Accept: text/event-stream, the same as Server-Sent Events: `held` events, then one `lost` event (or the stream ends when the wait runs out) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description false: the hold (or session) is gone; true: still held when the wait ran out */
            held: boolean
            /**
             * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
             * @enum {string}
             */
            reason?: 'expired' | 'released' | 'force_released' | 'session_lost'
            /** @description held false: when it went (ISO 8601) */
            at?: string
            /** @description held true: its remaining lease */
            remainingMs?: number
          }
          'text/event-stream':
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'held'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: true
                  /** @description held true: its remaining lease */
                  remainingMs: number
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'lost'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: false
                  /**
                   * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
                   * @enum {string}
                   */
                  reason: 'expired' | 'released' | 'force_released' | 'session_lost'
                  /** @description held false: when it went (ISO 8601) */
                  at: string
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'error'
                /** @description The data: line, one JSON object */
                data: components['schemas']['Error']
              }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_watchers | rate_limited | too_many_streams */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  watchPermit: {
    parameters: {
      query?: {
        /** @description The hold's token (or the Lock-Token header) */
        token?: string
        /** @description How long to wait for the hold to go (default 30 s, at most MAX_WATCH_MS, 10 min by default): 1500, 1500ms, 1.5s, 2m */
        wait?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description With Accept: text/event-stream, the same as Server-Sent Events: `held` events, then one `lost` event (or the stream ends when the wait runs out) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description false: the hold (or session) is gone; true: still held when the wait ran out */
            held: boolean
            /**
             * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
             * @enum {string}
             */
            reason?: 'expired' | 'released' | 'force_released' | 'session_lost'
            /** @description held false: when it went (ISO 8601) */
            at?: string
            /** @description held true: its remaining lease */
            remainingMs?: number
          }
          'text/event-stream':
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'held'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: true
                  /** @description held true: its remaining lease */
                  remainingMs: number
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'lost'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: false
                  /**
                   * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
                   * @enum {string}
                   */
                  reason: 'expired' | 'released' | 'force_released' | 'session_lost'
                  /** @description held false: when it went (ISO 8601) */
                  at: string
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'error'
                /** @description The data: line, one JSON object */
                data: components['schemas']['Error']
              }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_watchers | rate_limited | too_many_streams */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  watchSession: {
    parameters: {
      query?: {
        /** @description How long to wait for the hold to go (default 30 s, at most MAX_WATCH_MS, 10 min by default): 1500, 1500ms, 1.5s, 2m */
        wait?: string
      }
      header?: never
      path: {
        /** @description Session id (a secret, like a token): "s." followed by 22 characters from A-Z a-z 0-9 _ - (as POST /sessions made it) */
        id: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description With Accept: text/event-stream, the same as Server-Sent Events: `held` events, then one `lost` event (or the stream ends when the wait runs out) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description false: the hold (or session) is gone; true: still held when the wait ran out */
            held: boolean
            /**
             * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
             * @enum {string}
             */
            reason?: 'expired' | 'released' | 'force_released' | 'session_lost'
            /** @description held false: when it went (ISO 8601) */
            at?: string
            /** @description held true: its remaining lease */
            remainingMs?: number
          }
          'text/event-stream':
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'held'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: true
                  /** @description held true: its remaining lease */
                  remainingMs: number
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'lost'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: false
                  /**
                   * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
                   * @enum {string}
                   */
                  reason: 'expired' | 'released' | 'force_released' | 'session_lost'
                  /** @description held false: when it went (ISO 8601) */
                  at: string
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'error'
                /** @description The data: line, one JSON object */
                data: components['schemas']['Error']
              }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_watchers | rate_limited | too_many_streams */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  campaign: {
    parameters: {
      query?: {
        /** @description The candidate's label (as the body's candidate) */
        candidate?: string
        /** @description The value (as the body's value) */
        value?: string
        /** @description Lease length (as ttlMs): 1500, 1500ms, 1.5s, 2m, 1h. Default: DEFAULT_TTL_MS */
        ttl?: string
        /** @description wait: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 0ms … MAX_WAIT_MS */
        wait?: string
        /** @description Bind the leadership to this session (as the body's session) */
        session?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Election name: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + (names as lock keys, in a namespace of their own) */
        name: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Required here or as ?candidate= */
          candidate?: string
          /** @description What the leader announces (e.g. its address), at most 4096 bytes; shown to every observer */
          value?: string
          /** @description Lease length in ms, 100 … MAX_TTL_MS (3600000). Default: DEFAULT_TTL_MS */
          ttlMs?: number
          /** @description How long to wait in line for leadership, ms (0: try once; at most MAX_WAIT_MS, 60000) */
          waitMs?: number
          /** @description Bind the leadership to this session: its lease is the session's, and it ends with the session */
          session?: string
          /** @description Caller-chosen token; the server makes one when absent. The leader's own token again: 200, the same term */
          token?: string
        }
      }
    }
    responses: {
      /** @description The leader's own token again: the same term */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            name: string
            /** @description The term: this leadership's fencing token, strictly greater than every term before it in this election */
            term: number
            /** @description The leader token: keep it to renew, proclaim and resign */
            token: string
            candidate: string
            /** @description The value, or null when none was given */
            value: string | null
            /** @description 1 when elected, + 1 per proclaim */
            revision: number
            /** @description When this term began (ISO 8601) */
            since: string
            ttlMs: number
            /** @description How long the leader may safely act as leader: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which the leadership lapses unless renewed */
            expiresAt: string
          }
        }
      }
      /** @description Elected: a new term */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            name: string
            /** @description The term: this leadership's fencing token, strictly greater than every term before it in this election */
            term: number
            /** @description The leader token: keep it to renew, proclaim and resign */
            token: string
            candidate: string
            /** @description The value, or null when none was given */
            value: string | null
            /** @description 1 when elected, + 1 per proclaim */
            revision: number
            /** @description When this term began (ISO 8601) */
            since: string
            ttlMs: number
            /** @description How long the leader may safely act as leader: ttlMs − elapsed − clock drift */
            validityMs: number
            /** @description ISO 8601 time at which the leadership lapses unless renewed */
            expiresAt: string
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_waiters | too_many_holds | rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  proclaim: {
    parameters: {
      query?: never
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Election name: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + (names as lock keys, in a namespace of their own) */
        name: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Leader token (or the Lock-Token header) */
          token?: string
          /** @description What the leader announces (e.g. its address), at most 4096 bytes; shown to every observer */
          value: string
        }
      }
    }
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            name: string
            term: number
            /** @description The revision this value has: + 1 per proclaim */
            revision: number
            value: string
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  renewLeadership: {
    parameters: {
      query?: {
        /** @description ttl: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); 100ms … MAX_TTL_MS */
        ttl?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Election name: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + (names as lock keys, in a namespace of their own) */
        name: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Leader token (or the Lock-Token header) */
          token?: string
          /** @description New lease length in ms; default: the TTL of the latest campaign or renew */
          ttlMs?: number
        }
      }
    }
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            name: string
            term: number
            token: string
            ttlMs: number
            validityMs: number
            expiresAt: string
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  inspectElection: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Election name: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + (names as lock keys, in a namespace of their own) */
        name: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            name: string
            /** @description null: no leader now */
            leader: {
              candidate: string
              value: string | null
              term: number
              revision: number
              /** @description When this term began (ISO 8601) */
              since: string
              /** @description Until the leadership lapses unless renewed */
              remainingMs: number
            } | null
            /** @description The leader's term; with no leader, the latest term begun (0: none remembered) */
            term: number
            /** @description Candidates waiting in line */
            candidates: number
            /** @description Terms begun in this election (kept as long as its term counter: 7 days after the last) */
            transitions: number
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  resign: {
    parameters: {
      query?: {
        /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
        token?: string
        /** @description Admin: end the term whoever leads (no token needed): observers see vacant, force_released */
        force?: 'true' | 'false'
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Election name: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + (names as lock keys, in a namespace of their own) */
        name: string
      }
      cookie?: never
    }
    /** @description Optional: an empty body means all defaults. Must be a JSON object when present. */
    requestBody?: {
      content: {
        'application/json': {
          /** @description Owner token: 16–128 characters from A-Z a-z 0-9 _ - */
          token?: string
        }
      }
    }
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            name: string
            /**
             * @description The term is over
             * @enum {boolean}
             */
            resigned: true
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description payload_too_large */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unsupported_media_type */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  listElections: {
    parameters: {
      query?: {
        /** @description Only keys that start with this */
        prefix?: string
        /** @description Stop scanning once this many are found (default 100; a page may hold a few more) */
        limit?: string
        cursor?: string
      }
      header?: never
      path?: never
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            items: {
              name: string
              /** @description null: no leader now */
              leader: {
                candidate: string
                value: string | null
                term: number
                revision: number
                /** @description When this term began (ISO 8601) */
                since: string
                /** @description Until the leadership lapses unless renewed */
                remainingMs: number
              } | null
              /** @description The leader's term; with no leader, the latest term begun (0: none remembered) */
              term: number
              /** @description Candidates waiting in line */
              candidates: number
              /** @description Terms begun in this election (kept as long as its term counter: 7 days after the last) */
              transitions: number
            }[]
            /** @description Pass it back for the next page; null: the scan is complete */
            cursor: string | null
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  observeElection: {
    parameters: {
      query?: {
        /** @description The term you saw (an answer's term, from any replica): answers at once when the election has moved on; absent: at once */
        after?: string
        /** @description With after: the revision you saw (an answer's revision; 0 for no leader), so that a proclaim or a vacancy counts too */
        revision?: string
        /** @description How long to wait for a change (default 30 s, at most MAX_WATCH_MS): 1500, 1500ms, 1.5s, 2m */
        wait?: string
      }
      header?: {
        /** @description An event stream resumed (as EventSource does): the id of the last event seen, as after and revision */
        'last-event-id'?: string
      }
      path: {
        /** @description Election name: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + (names as lock keys, in a namespace of their own) */
        name: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Pass term and revision back as after and revision. With Accept: text/event-stream, Server-Sent Events instead: elected { term, revision, candidate, value, since }, proclaimed { term, revision, value }, vacant { term, revision: 0, reason? }, resync { term, revision, leader } (a state to replace yours); events: elected, proclaimed, vacant, resync; each with id "<term>.<revision>" */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            name: string
            /** @description The leader's term; with no leader, the term that ended last (0: none known) */
            term: number
            /** @description The leader's revision (1 when elected, + 1 per proclaim); 0 with no leader */
            revision: number
            leader: {
              candidate: string
              value: string | null
              term: number
              revision: number
              /** @description When this term began (ISO 8601) */
              since: string
              /** @description Until the leadership lapses unless renewed */
              remainingMs: number
            } | null
            /**
             * @description No leader: why the last term ended, when this replica saw it end
             * @enum {string}
             */
            reason?: 'resigned' | 'expired' | 'force_released' | 'session_lost'
            /** @description false: the wait ran out on the state given by after and revision */
            changed: boolean
          }
          'text/event-stream':
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'elected'
                /** @description The id: line, "<term>.<revision>" */
                id: string
                /** @description The data: line, one JSON object */
                data: {
                  /** @description The leader's term; with no leader, the term that ended last (0: none known) */
                  term: number
                  /** @description The leader's revision (1 when elected, + 1 per proclaim); 0 with no leader */
                  revision: number
                  candidate: string
                  value: string | null
                  /** @description When this term began (ISO 8601) */
                  since: string
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'proclaimed'
                /** @description The id: line, "<term>.<revision>" */
                id: string
                /** @description The data: line, one JSON object */
                data: {
                  /** @description The leader's term; with no leader, the term that ended last (0: none known) */
                  term: number
                  /** @description The leader's revision (1 when elected, + 1 per proclaim); 0 with no leader */
                  revision: number
                  value: string | null
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'vacant'
                /** @description The id: line, "<term>.<revision>" */
                id: string
                /** @description The data: line, one JSON object */
                data: {
                  /** @description The leader's term; with no leader, the term that ended last (0: none known) */
                  term: number
                  /** @constant */
                  revision: 0
                  /**
                   * @description No leader: why the last term ended, when this replica saw it end
                   * @enum {string}
                   */
                  reason?: 'resigned' | 'expired' | 'force_released' | 'session_lost'
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'resync'
                /** @description The id: line, "<term>.<revision>" */
                id: string
                /** @description The data: line, one JSON object */
                data: {
                  /** @description The leader's term; with no leader, the term that ended last (0: none known) */
                  term: number
                  /** @description The leader's revision (1 when elected, + 1 per proclaim); 0 with no leader */
                  revision: number
                  leader: {
                    candidate: string
                    value: string | null
                    term: number
                    revision: number
                    /** @description When this term began (ISO 8601) */
                    since: string
                    /** @description Until the leadership lapses unless renewed */
                    remainingMs: number
                  } | null
                  /**
                   * @description No leader: why the last term ended, when this replica saw it end
                   * @enum {string}
                   */
                  reason?: 'resigned' | 'expired' | 'force_released' | 'session_lost'
                }
              }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_watchers | rate_limited | too_many_streams */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  watchLeadership: {
    parameters: {
      query?: {
        /** @description The hold's token (or the Lock-Token header) */
        token?: string
        /** @description How long to wait for the hold to go (default 30 s, at most MAX_WATCH_MS, 10 min by default): 1500, 1500ms, 1.5s, 2m */
        wait?: string
      }
      header?: {
        /** @description Owner token (alternative to the body or query field) */
        'lock-token'?: string
      }
      path: {
        /** @description Election name: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + (names as lock keys, in a namespace of their own) */
        name: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description With Accept: text/event-stream, the same as Server-Sent Events: `held` events, then one `lost` event (or the stream ends when the wait runs out) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description false: the hold (or session) is gone; true: still held when the wait ran out */
            held: boolean
            /**
             * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
             * @enum {string}
             */
            reason?: 'expired' | 'released' | 'force_released' | 'session_lost'
            /** @description held false: when it went (ISO 8601) */
            at?: string
            /** @description held true: its remaining lease */
            remainingMs?: number
          }
          'text/event-stream':
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'held'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: true
                  /** @description held true: its remaining lease */
                  remainingMs: number
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'lost'
                /** @description The data: line, one JSON object */
                data: {
                  /** @constant */
                  held: false
                  /**
                   * @description held false: why. expired (its lease ran out while watched), released, force_released (an admin), session_lost (its session was closed or lapsed). A session itself: released (closed) or expired
                   * @enum {string}
                   */
                  reason: 'expired' | 'released' | 'force_released' | 'session_lost'
                  /** @description held false: when it went (ISO 8601) */
                  at: string
                }
              }
            | {
                /**
                 * @description The event: line
                 * @constant
                 */
                event: 'error'
                /** @description The data: line, one JSON object */
                data: components['schemas']['Error']
              }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_not_found | session_not_found | route_not_found */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description lock_held | lock_delayed | not_owner | upgrade_not_supported | limit_mismatch | permits_mismatch */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description too_many_watchers | rate_limited | too_many_streams */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  checkLockFence: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
        /** @description The fence to check: a whole number, 1 … 2^53 − 1 */
        fence: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description A snapshot: the hold may end the moment after. Pair it with the resource's own write window (docs: Protecting a resource) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description true only while a live hold carries exactly this fence (a read or semaphore hold: any one of them) */
            current: boolean
            /** @description The fence asked about when it is current; else the live hold's fence (several read or semaphore holds: the highest, the newest); null when nothing is held. current is always fence == the fence asked about */
            fence: number | null
            /** @description Anything is held there, by this fence or another */
            held: boolean
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  checkRwLockFence: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
        /** @description The fence to check: a whole number, 1 … 2^53 − 1 */
        fence: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description A snapshot: the hold may end the moment after. Pair it with the resource's own write window (docs: Protecting a resource) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description true only while a live hold carries exactly this fence (a read or semaphore hold: any one of them) */
            current: boolean
            /** @description The fence asked about when it is current; else the live hold's fence (several read or semaphore holds: the highest, the newest); null when nothing is held. current is always fence == the fence asked about */
            fence: number | null
            /** @description Anything is held there, by this fence or another */
            held: boolean
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  checkSemaphoreFence: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Lock key: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + */
        key: string
        /** @description The fence to check: a whole number, 1 … 2^53 − 1 */
        fence: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description A snapshot: the hold may end the moment after. Pair it with the resource's own write window (docs: Protecting a resource) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description true only while a live hold carries exactly this fence (a read or semaphore hold: any one of them) */
            current: boolean
            /** @description The fence asked about when it is current; else the live hold's fence (several read or semaphore holds: the highest, the newest); null when nothing is held. current is always fence == the fence asked about */
            fence: number | null
            /** @description Anything is held there, by this fence or another */
            held: boolean
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  checkElectionTerm: {
    parameters: {
      query?: never
      header?: never
      path: {
        /** @description Election name: 1–200 characters from A-Z a-z 0-9 . _ - : @ = + (names as lock keys, in a namespace of their own) */
        name: string
        /** @description The term to check (a leader's fence): a whole number, 1 … 2^53 − 1 */
        fence: string
      }
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description A snapshot: the hold may end the moment after. Pair it with the resource's own write window (docs: Protecting a resource) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @description true only while a live hold carries exactly this fence (a read or semaphore hold: any one of them) */
            current: boolean
            /** @description The fence asked about when it is current; else the live hold's fence (several read or semaphore holds: the highest, the newest); null when nothing is held. current is always fence == the fence asked about */
            fence: number | null
            /** @description Anything is held there, by this fence or another */
            held: boolean
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description forbidden */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description rate_limited */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description backend_unavailable | shutting_down */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          'Retry-After': components['headers']['Retry-After']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  getHealth: {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            /** @enum {string} */
            status: 'ok'
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  getReadiness: {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Ready */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            ready: boolean
            majority: number
            nodes: {
              index: number
              /** @description host:port (never a password) */
              address: string
              up: boolean
              /** @description latency of the last successful command, ms */
              latencyMs: number | null
              /**
               * @description Whether the answers of this node count toward a majority now (counts), or why not: not connected, not yet identified, a replica, in its quarantine after a restart, or its clock misbehaved
               * @enum {string}
               */
              vote: 'counts' | 'down' | 'identifying' | 'replica' | 'quarantined' | 'clock_untrusted'
              /** @description ms until a node that restarted recently counts toward grants again (0: it counts) */
              quarantineMs: number
              /** @description When the node last started anew (its run_id changed) since this replica met it: its holds may be gone; or null */
              restartedAt: string | null
              /** @description How the node's clock compares with this replica's monotonic clock (sampled every second) */
              clock: {
                /** @enum {string} */
                state: 'unknown' | 'trusted' | 'untrusted'
                /** @description the node's clock rate against this replica's (1 = same speed; null until two samples) */
                rate: number | null
                /** @description ms until an untrusted clock counts again if it keeps behaving (0: trusted) */
                trustedInMs: number
              }
              /** @description The latest failure talking to this node (kept after it recovers; compare `at`), or null */
              lastError: {
                /**
                 * @description auth (NOAUTH, WRONGPASS, NOPERM), refused, timeout, not_redis (the port speaks another protocol), replica, tls, other
                 * @enum {string}
                 */
                reason: 'auth' | 'refused' | 'timeout' | 'not_redis' | 'replica' | 'tls' | 'other'
                /** @description What failed, in one sentence (never a password) */
                message: string
                /** @description ISO 8601 time of the failure */
                at: string
              } | null
            }[]
          }
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description Not ready: fewer than a majority of nodes answer and may vote */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': {
            ready: boolean
            majority: number
            nodes: {
              index: number
              /** @description host:port (never a password) */
              address: string
              up: boolean
              /** @description latency of the last successful command, ms */
              latencyMs: number | null
              /**
               * @description Whether the answers of this node count toward a majority now (counts), or why not: not connected, not yet identified, a replica, in its quarantine after a restart, or its clock misbehaved
               * @enum {string}
               */
              vote: 'counts' | 'down' | 'identifying' | 'replica' | 'quarantined' | 'clock_untrusted'
              /** @description ms until a node that restarted recently counts toward grants again (0: it counts) */
              quarantineMs: number
              /** @description When the node last started anew (its run_id changed) since this replica met it: its holds may be gone; or null */
              restartedAt: string | null
              /** @description How the node's clock compares with this replica's monotonic clock (sampled every second) */
              clock: {
                /** @enum {string} */
                state: 'unknown' | 'trusted' | 'untrusted'
                /** @description the node's clock rate against this replica's (1 = same speed; null until two samples) */
                rate: number | null
                /** @description ms until an untrusted clock counts again if it keeps behaving (0: trusted) */
                trustedInMs: number
              }
              /** @description The latest failure talking to this node (kept after it recovers; compare `at`), or null */
              lastError: {
                /**
                 * @description auth (NOAUTH, WRONGPASS, NOPERM), refused, timeout, not_redis (the port speaks another protocol), replica, tls, other
                 * @enum {string}
                 */
                reason: 'auth' | 'refused' | 'timeout' | 'not_redis' | 'replica' | 'tls' | 'other'
                /** @description What failed, in one sentence (never a password) */
                message: string
                /** @description ISO 8601 time of the failure */
                at: string
              } | null
            }[]
          }
        }
      }
    }
  }
  getMetrics: {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description Prometheus text exposition format */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'text/plain': string
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
      /** @description unauthorized */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
  getOpenApi: {
    parameters: {
      query?: never
      header?: never
      path?: never
      cookie?: never
    }
    requestBody?: never
    responses: {
      /** @description This document */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/yaml': string
        }
      }
      /** @description invalid_request */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id']
          [name: string]: unknown
        }
        content: {
          'application/json': components['schemas']['Error']
        }
      }
    }
  }
}
