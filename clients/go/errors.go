package lockservice

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Error codes the service sends (the "error" field of its JSON error body).
const (
	CodeInvalidRequest      = "invalid_request"
	CodeUnauthorized        = "unauthorized"
	CodeForbidden           = "forbidden"
	CodeLockNotFound        = "lock_not_found"
	CodeSessionNotFound     = "session_not_found"
	CodeLockHeld            = "lock_held"
	CodeLockDelayed         = "lock_delayed"
	CodeNotOwner            = "not_owner"
	CodeUpgradeNotSupported = "upgrade_not_supported"
	CodeLimitMismatch       = "limit_mismatch"
	CodePermitsMismatch     = "permits_mismatch"
	CodeTooManyWaiters      = "too_many_waiters"
	CodeTooManyReaders      = "too_many_readers"
	CodeTooManyHolds        = "too_many_holds"
	CodeTooManyWatchers     = "too_many_watchers"
	CodeTooManySessions     = "too_many_sessions"
	CodeTooManyStreams      = "too_many_streams"
	CodeRateLimited         = "rate_limited"
	CodeBackendUnavailable  = "backend_unavailable"
	CodeShuttingDown        = "shutting_down"
)

// Error is an error answered by the service: its code, HTTP status, message, request id and the
// details of its body. Every code is this one type; compare with errors.Is against the sentinels
// (ErrLockHeld, ErrNotOwner, …) or use the predicates (IsLockHeld, …). A code this library does not
// know still arrives as an *Error with that Code.
type Error struct {
	Code      string
	Status    int
	Message   string
	RequestID string
	// RetryAfter: lock_held (when the holds in the way lapse), too_many_*, backend_unavailable,
	// shutting_down; from retryAfterMs, else the Retry-After header.
	RetryAfter time.Duration
	// Owners: lock_held, the owner labels of the holds in the way.
	Owners []string
	// Waited: lock_held after waiting in line.
	Waited time.Duration
	// DelayedUntil: lock_delayed, when the lock-delay ends.
	DelayedUntil time.Time
	// Limit: limit_mismatch, the semaphore's limit. Permits: permits_mismatch, the permits held.
	Limit   int
	Permits int
	// Reason and Nodes: backend_unavailable (each Redis node's state, as the service reports it).
	Reason string
	Nodes  []NodeState
	// Issues: invalid_request, what is wrong with each field.
	Issues []Issue
	// Body is the whole error body as the service sent it.
	Body map[string]any
}

// Issue is one problem of an invalid request.
type Issue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	s := fmt.Sprintf("lock-service: %d %s: %s", e.Status, e.Code, e.Message)
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrLockHeld) (and the other sentinels) match an *Error by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == 0 && t.Code == e.Code
}

func sentinel(code string) *Error { return &Error{Code: code, Message: "any " + code + " answer"} }

// Sentinels for errors.Is: errors.Is(err, lockservice.ErrLockHeld).
var (
	ErrInvalidRequest      = sentinel(CodeInvalidRequest)
	ErrUnauthorized        = sentinel(CodeUnauthorized)
	ErrForbidden           = sentinel(CodeForbidden)
	ErrLockNotFound        = sentinel(CodeLockNotFound)
	ErrSessionNotFound     = sentinel(CodeSessionNotFound)
	ErrLockHeld            = sentinel(CodeLockHeld)
	ErrLockDelayed         = sentinel(CodeLockDelayed)
	ErrNotOwner            = sentinel(CodeNotOwner)
	ErrUpgradeNotSupported = sentinel(CodeUpgradeNotSupported)
	ErrLimitMismatch       = sentinel(CodeLimitMismatch)
	ErrPermitsMismatch     = sentinel(CodePermitsMismatch)
	ErrTooManyWaiters      = sentinel(CodeTooManyWaiters)
	ErrTooManyReaders      = sentinel(CodeTooManyReaders)
	ErrTooManyHolds        = sentinel(CodeTooManyHolds)
	ErrTooManyWatchers     = sentinel(CodeTooManyWatchers)
	ErrTooManySessions     = sentinel(CodeTooManySessions)
	ErrTooManyStreams      = sentinel(CodeTooManyStreams)
	ErrRateLimited         = sentinel(CodeRateLimited)
	ErrBackendUnavailable  = sentinel(CodeBackendUnavailable)
	ErrShuttingDown        = sentinel(CodeShuttingDown)
)

// ServiceError returns the *Error in err's chain, if any.
func ServiceError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func hasCode(err error, code string) bool {
	e, ok := ServiceError(err)
	return ok && e.Code == code
}

// IsLockHeld reports whether err is a 409 lock_held (e.RetryAfter, e.Owners, e.Waited say more).
func IsLockHeld(err error) bool { return hasCode(err, CodeLockHeld) }

// IsLockDelayed reports a 409 lock_delayed: free, but in a lock-delay until e.DelayedUntil.
func IsLockDelayed(err error) bool { return hasCode(err, CodeLockDelayed) }

// IsNotOwner reports a 409 not_owner: another token holds it; this hold is gone.
func IsNotOwner(err error) bool { return hasCode(err, CodeNotOwner) }

// IsLockNotFound reports a 404 lock_not_found: nothing held (expired, released, force-released).
func IsLockNotFound(err error) bool { return hasCode(err, CodeLockNotFound) }

// IsSessionNotFound reports a 404 session_not_found.
func IsSessionNotFound(err error) bool { return hasCode(err, CodeSessionNotFound) }

// IsLimitMismatch reports a 409 limit_mismatch (e.Limit is the semaphore's limit).
func IsLimitMismatch(err error) bool { return hasCode(err, CodeLimitMismatch) }

// IsPermitsMismatch reports a 409 permits_mismatch (e.Permits is what the holder holds).
func IsPermitsMismatch(err error) bool { return hasCode(err, CodePermitsMismatch) }

// IsTooMany reports any 429 limit: too_many_* (waiters, readers, holds, watchers, sessions, streams) or
// rate_limited.
func IsTooMany(err error) bool {
	e, ok := ServiceError(err)
	return ok && (strings.HasPrefix(e.Code, "too_many_") || e.Code == CodeRateLimited)
}

// IsRateLimited reports a 429 rate_limited: this key's request rate (e.RetryAfter says when to retry).
func IsRateLimited(err error) bool { return hasCode(err, CodeRateLimited) }

// IsTooManyWaiters reports a 429 too_many_waiters.
func IsTooManyWaiters(err error) bool { return hasCode(err, CodeTooManyWaiters) }

// IsBackendUnavailable reports a 503 backend_unavailable (e.Nodes, e.Reason, e.RetryAfter).
func IsBackendUnavailable(err error) bool { return hasCode(err, CodeBackendUnavailable) }

// IsUnauthorized reports a 401 unauthorized.
func IsUnauthorized(err error) bool { return hasCode(err, CodeUnauthorized) }

// IsForbidden reports a 403 forbidden.
func IsForbidden(err error) bool { return hasCode(err, CodeForbidden) }

// IsInvalidRequest reports a 400 invalid_request (e.Issues lists what is wrong).
func IsInvalidRequest(err error) bool { return hasCode(err, CodeInvalidRequest) }

// InvalidArgumentError is an argument refused before any request was sent.
type InvalidArgumentError struct {
	Argument string
	Reason   string
}

func (e *InvalidArgumentError) Error() string {
	return "lock-service: invalid argument " + e.Argument + ": " + e.Reason
}

// IsInvalidArgument reports an argument refused locally, before any request.
func IsInvalidArgument(err error) bool {
	var e *InvalidArgumentError
	return errors.As(err, &e)
}

// TransportError: no answer from the service (unreachable, reset, or the request timed out).
// Err is the underlying net/http error.
type TransportError struct {
	Method  string
	Path    string
	Timeout bool
	Err     error
}

func (e *TransportError) Error() string {
	what := "unreachable"
	if e.Timeout {
		what = "timed out"
	}
	return fmt.Sprintf("lock-service: %s %s: %s: %v", e.Method, e.Path, what, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// IsUnreachable reports a request that got no answer (connection refused, reset, DNS, timeout).
func IsUnreachable(err error) bool {
	var e *TransportError
	return errors.As(err, &e)
}

// IsTimeout reports a request that got no answer in time.
func IsTimeout(err error) bool {
	var e *TransportError
	return errors.As(err, &e) && e.Timeout
}

// LossReason says why a hold was lost.
type LossReason string

// The service's reasons (a watch), and the library's own.
const (
	LostExpired           LossReason = "expired"
	LostReleased          LossReason = "released"
	LostForceReleased     LossReason = "force_released"
	LostSessionLost       LossReason = "session_lost"
	LostNotHeld           LossReason = "not_held"           // a renew answered 404 or 409
	LostValidityExhausted LossReason = "validity_exhausted" // renewals kept failing until the safety margin
	LostMaxHold           LossReason = "max_hold"           // MaxHold reached: the watchdog stopped renewing
)

// LockLostError: the hold is no longer safe to act on.
type LockLostError struct {
	Key    string
	Kind   Kind
	Reason LossReason
	// Detail: what the service or the watchdog saw (never a token).
	Detail string
}

func (e *LockLostError) Error() string {
	s := fmt.Sprintf("lock-service: lost %s hold on %q: %s", e.Kind, e.Key, e.Reason)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// IsLockLost reports a hold that was lost.
func IsLockLost(err error) bool {
	var e *LockLostError
	return errors.As(err, &e)
}

// ReleaseError is what WithLock returns when the block failed AND releasing on exit failed too:
// Unwrap gives the block's own error, so errors.Is / errors.As find it; Release says why the
// release failed (the hold then lapses by itself within its TTL).
type ReleaseError struct {
	Err     error
	Release error
}

func (e *ReleaseError) Error() string {
	return e.Err.Error() + " (and releasing the hold failed: " + e.Release.Error() + ")"
}

func (e *ReleaseError) Unwrap() error { return e.Err }
