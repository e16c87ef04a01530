package lockservice

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// DefaultReleaseTimeout bounds the release when WithLock returns.
const DefaultReleaseTimeout = 2 * time.Second

// Hold is an acquired hold. Unless acquired Manual, a goroutine renews it every ttl/3 (±10 %)
// and a watch on the service tells at once when it is lost; Lost() is then closed and Err() says why.
type Hold struct {
	Key   string
	Kind  Kind
	Token string
	// Fence: pass it to the resource you protect; it strictly increases per key.
	Fence int64
	// Grant is the acquire's answer.
	Grant Grant
	// Session: the session the hold is bound to ("" when none).
	Session string

	c    *Client
	opts AcquireOptions
	k    *keeper

	releaseOnce sync.Once
	releaseErr  error
}

// Acquire acquires a hold (retrying safely, see AcquireGrant), re-anchors its validity with an
// immediate renew when the grant came after a wait in line or little of its window is left, and
// (unless o.Manual) starts its watchdog and watch. Release it when done.
func (c *Client) Acquire(ctx context.Context, key string, o AcquireOptions) (*Hold, error) {
	g, sent, err := c.acquire(ctx, key, &o)
	if err != nil {
		return nil, err
	}
	return c.keep(ctx, key, o.kind(), g, sent, o)
}

// keep makes the Hold of a grant sent at sent: re-anchored if need be, and kept unless o.Manual.
func (c *Client) keep(ctx context.Context, key string, kind Kind, g *Grant, sent time.Time, o AcquireOptions) (*Hold, error) {
	h := &Hold{Key: key, Kind: kind, Token: g.Token, Fence: g.Fence, Grant: *g, Session: o.Session, c: c, opts: o}
	ttl := g.TTL()
	h.k = newKeeper(c, ttl, o.SafetyMargin, sent, g.Validity())
	h.k.renew = h.renewOnce
	h.k.lostError = func(reason LossReason, detail string) *LockLostError {
		return &LockLostError{Key: key, Kind: h.Kind, Reason: reason, Detail: detail}
	}
	if o.MaxHold > 0 {
		h.k.maxHoldAt = sent.Add(o.MaxHold)
	}
	elapsed := time.Since(sent)
	waited := o.Wait > 0 && elapsed > ttl/10
	if waited || time.Until(h.k.getDeadline()) < 2*ttl/3 {
		if err := h.reanchor(ctx); err != nil {
			_ = h.release(context.Background(), h.releaseTimeout())
			return nil, err
		}
	}
	if !o.Manual {
		if !o.NoWatch {
			h.k.watchPath, h.k.watchToken = holdPath(h.Kind, key)+"/watch", h.Token
		}
		h.k.start()
	}
	return h, nil
}

// reanchor renews at once (a renew never waits), retrying transient failures until the safety
// margin before the deadline (at least one attempt).
func (h *Hold) reanchor(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		lossAt := h.k.getDeadline().Add(-h.k.margin)
		rctx, cancel := context.WithTimeout(ctx, h.c.timeout)
		err := h.k.renewNow(rctx)
		cancel()
		if err == nil || IsLockLost(err) || ctx.Err() != nil {
			return err
		}
		d := backoff(attempt)
		if time.Now().Add(d).After(lossAt) {
			return h.k.lostError(LostValidityExhausted, "the re-anchoring renew after the grant failed: "+err.Error())
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// renewOnce renews the hold, or (bound to a session) keeps the session alive and checks that it
// still has the hold. It returns the validity counted from its send time.
func (h *Hold) renewOnce(ctx context.Context) (time.Duration, error) {
	if h.Session != "" {
		ka, err := h.c.KeepaliveSession(ctx, h.Session)
		if err == nil {
			for _, s := range ka.Holds {
				if s.Key == h.Key && s.Kind == h.Kind {
					return ms(ka.ValidityMs), nil
				}
			}
			// The session no longer has the hold: its own renew says why.
		} else if IsSessionNotFound(err) {
			return 0, &goneError{reason: LostSessionLost, detail: "the session's keepalive: " + err.(*Error).Message}
		} else {
			return 0, err
		}
	}
	g := new(Grant)
	_, err := h.c.call(ctx, request{method: http.MethodPut, path: holdPath(h.Kind, h.Key) + "/renew", token: h.Token, body: map[string]any{}}, g)
	if err != nil {
		if e, ok := ServiceError(err); ok && (e.Code == CodeLockNotFound || e.Code == CodeNotOwner) {
			return 0, &goneError{reason: LostNotHeld, detail: "a renew answered " + e.Code + ": " + e.Message}
		}
		return 0, err
	}
	return g.Validity(), nil
}

// Lost is closed the moment the hold is lost (never when it is released by Release or WithLock).
func (h *Hold) Lost() <-chan struct{} { return h.k.lost }

// Err is nil while the hold is held, then a *LockLostError saying why it was lost. It also
// compares the local validity deadline with the clock itself, so a process that was paused past
// it learns so here even before the watchdog's goroutine has run (the loss is then signalled).
func (h *Hold) Err() error {
	if e := h.k.lostErr(); e != nil {
		return e
	}
	if h.k.started && time.Now().After(h.k.getDeadline()) {
		h.k.lose(LostValidityExhausted, "the local validity deadline has passed")
		if e := h.k.lostErr(); e != nil {
			return e
		}
	}
	return nil
}

// Reason is "" while the hold is held, then why it was lost.
func (h *Hold) Reason() LossReason {
	if e := h.k.lostErr(); e != nil {
		return e.Reason
	}
	return ""
}

// Deadline is the local validity deadline: the latest successful grant's or renewal's send time
// plus its validity (a monotonic time). Act on the hold only before it.
func (h *Hold) Deadline() time.Time { return h.k.getDeadline() }

// Remaining is the time left before Deadline (negative once passed).
func (h *Hold) Remaining() time.Duration { return time.Until(h.k.getDeadline()) }

// Renew renews the hold now and re-anchors its deadline (a Manual hold's only way to stay held).
func (h *Hold) Renew(ctx context.Context) error {
	if err := h.Err(); err != nil {
		return err
	}
	return h.k.renewNow(ctx)
}

// Release stops the watchdog and releases the hold (retrying a 503 or a transport failure while
// ctx allows). Releasing a hold that was lost is not an error when the service no longer has it.
// Only the first call releases; later ones return its result.
func (h *Hold) Release(ctx context.Context) error { return h.release(ctx, 0) }

func (h *Hold) releaseTimeout() time.Duration {
	if h.opts.ReleaseTimeout > 0 {
		return h.opts.ReleaseTimeout
	}
	return DefaultReleaseTimeout
}

func (h *Hold) release(ctx context.Context, timeout time.Duration) error {
	h.releaseOnce.Do(func() { h.releaseErr = h.releaseNow(ctx, timeout) })
	return h.releaseErr
}

func (h *Hold) releaseNow(ctx context.Context, timeout time.Duration) error {
	h.k.halt()
	lost := h.k.lostErr()
	if lost != nil && lost.Reason != LostValidityExhausted && lost.Reason != LostMaxHold {
		return nil // the service said it is gone: nothing to release
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		_, err := h.c.call(ctx, request{method: http.MethodDelete, path: holdPath(h.Kind, h.Key), token: h.Token}, nil)
		if err == nil {
			return nil
		}
		if e, ok := ServiceError(err); ok && (e.Code == CodeLockNotFound || e.Code == CodeNotOwner) {
			if lost != nil {
				return nil
			}
			return &LockLostError{Key: h.Key, Kind: h.Kind, Reason: LostNotHeld, Detail: "the release found it no longer held: " + e.Message}
		}
		delay, again := retryDelay(err, attempt)
		if !again || ctx.Err() != nil {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Now().Add(delay).After(dl) {
			return err
		}
		if sleep(ctx, delay) != nil {
			return err
		}
	}
}

type holdKey struct{}

// HoldFrom returns the hold of the innermost WithLock whose block ctx is (derived from) ctx.
func HoldFrom(ctx context.Context) (*Hold, bool) {
	h, ok := ctx.Value(holdKey{}).(*Hold)
	return h, ok
}

// LossReasonOf says why the context a WithLock block got was cancelled by a loss ("" while held,
// or when ctx is not a WithLock block's).
func LossReasonOf(ctx context.Context) LossReason {
	if h, ok := HoldFrom(ctx); ok {
		return h.Reason()
	}
	return ""
}

// WithLock acquires key (any kind of hold: o.Kind), runs fn with a context that is cancelled the
// moment the hold is lost, and releases the hold when fn returns (bounded by o.ReleaseTimeout,
// default 2 s, whatever ctx says). What it returns:
//   - fn's error as is; wrapped in a *ReleaseError (Unwrap gives fn's error) only when the release
//     failed too;
//   - when fn returned nil but the hold was lost while it ran: the *LockLostError (the work may
//     have run unprotected);
//   - when fn returned nil and only the release failed: nil (the hold lapses within its TTL);
//     o.OnReleaseError gets the failure.
//
// A panic in fn releases the hold and goes on panicking.
func (c *Client) WithLock(ctx context.Context, key string, o AcquireOptions, fn func(ctx context.Context, h *Hold) error) error {
	o.Manual = false
	h, err := c.Acquire(ctx, key, o)
	if err != nil {
		return err
	}
	return c.runHeld(ctx, h, o.OnReleaseError, func(ctx context.Context) error { return fn(ctx, h) })
}

// runHeld runs fn with a ctx cancelled the moment h is lost, then releases h (see WithLock).
func (c *Client) runHeld(ctx context.Context, h *Hold, onReleaseError func(string, error), fn func(ctx context.Context) error) (err error) {
	bctx, cancel := context.WithCancel(context.WithValue(ctx, holdKey{}, h))
	finished := make(chan struct{})
	go func() {
		select {
		case <-h.Lost():
			cancel()
		case <-finished:
		}
	}()
	panicked := true
	defer func() {
		close(finished)
		cancel()
		relErr := h.release(context.Background(), h.releaseTimeout())
		if panicked {
			return
		}
		switch {
		case relErr != nil && err != nil:
			err = &ReleaseError{Err: err, Release: relErr}
		case relErr != nil && onReleaseError != nil:
			onReleaseError(h.Key, relErr)
		}
		if err == nil {
			err = h.Err()
		}
	}()
	err = fn(bctx)
	panicked = false
	return err
}
