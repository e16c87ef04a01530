package lockservice

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// SessionOptions: a session's lease (≥ 100 ms; 0: the service's default) and owner label.
type SessionOptions struct {
	TTL   time.Duration
	Owner string
	// LockDelay: the lock-delay of the session's holds that give none of their own (0: none).
	LockDelay time.Duration
	// SafetyMargin and ReleaseTimeout as for holds (KeepSession and WithSession).
	SafetyMargin   time.Duration
	ReleaseTimeout time.Duration
}

func sessionPath(id string) string { return "/sessions/" + url.PathEscape(id) }

// OpenSession opens a session: bind holds to it with AcquireOptions.Session.
func (c *Client) OpenSession(ctx context.Context, o SessionOptions) (*Session, error) {
	if err := validTTL("ttl", o.TTL); err != nil {
		return nil, err
	}
	if err := validOwner(o.Owner); err != nil {
		return nil, err
	}
	body := map[string]any{}
	if o.TTL > 0 {
		body["ttlMs"] = millis(o.TTL)
	}
	if o.Owner != "" {
		body["owner"] = o.Owner
	}
	if o.LockDelay < 0 {
		return nil, invalid("lockDelay", "must not be negative")
	}
	if o.LockDelay > 0 {
		body["lockDelayMs"] = millis(o.LockDelay)
	}
	s := new(Session)
	if _, err := c.call(ctx, request{method: http.MethodPost, path: "/sessions", body: body}, s); err != nil {
		return nil, err
	}
	return s, nil
}

// KeepaliveSession renews the session and every hold bound to it.
func (c *Client) KeepaliveSession(ctx context.Context, id string) (*Keepalive, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	out := new(Keepalive)
	if _, err := c.call(ctx, request{method: http.MethodPut, path: sessionPath(id) + "/keepalive"}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// InspectSession: its lease and holds.
func (c *Client) InspectSession(ctx context.Context, id string) (*SessionInfo, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	out := new(SessionInfo)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: sessionPath(id)}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// CloseSession ends the session and releases every hold bound to it.
func (c *Client) CloseSession(ctx context.Context, id string) (*SessionClosed, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	out := new(SessionClosed)
	if _, err := c.call(ctx, request{method: http.MethodDelete, path: sessionPath(id)}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// WatchSession long-polls until the session is closed or lapses, or the wait runs out.
func (c *Client) WatchSession(ctx context.Context, id string, wait time.Duration) (*WatchEvent, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	return c.watch(ctx, sessionPath(id)+"/watch", "", wait)
}

func validSessionID(id string) error {
	if id == "" {
		return invalid("session", "is empty")
	}
	return validSession(id)
}

// SessionKeeper keeps a session alive on its own goroutine (a keepalive every ttl/3 ±10 %) and
// watches it; Lost() is closed when it is lost.
type SessionKeeper struct {
	Session *Session
	c       *Client
	k       *keeper
	timeout time.Duration
}

// KeepSession opens a session and keeps it alive until Close (or until it is lost).
func (c *Client) KeepSession(ctx context.Context, o SessionOptions) (*SessionKeeper, error) {
	sent := time.Now()
	s, err := c.OpenSession(ctx, o)
	if err != nil {
		return nil, err
	}
	ttl := ms(s.TTLMs)
	sk := &SessionKeeper{Session: s, c: c, timeout: o.ReleaseTimeout}
	// Opening answers no validity: count the TTL from the send time, less the drift the service allows.
	sk.k = newKeeper(c, ttl, o.SafetyMargin, sent, ttl-ttl/100-2*time.Millisecond)
	sk.k.renew = func(ctx context.Context) (time.Duration, error) {
		ka, err := c.KeepaliveSession(ctx, s.ID)
		if err != nil {
			if IsSessionNotFound(err) {
				return 0, &goneError{reason: LostSessionLost, detail: "the keepalive: " + err.(*Error).Message}
			}
			return 0, err
		}
		return ms(ka.ValidityMs), nil
	}
	sk.k.lostError = func(reason LossReason, detail string) *LockLostError {
		return &LockLostError{Kind: "session", Reason: reason, Detail: detail}
	}
	sk.k.watchPath = sessionPath(s.ID) + "/watch"
	sk.k.start()
	return sk, nil
}

// Lost is closed the moment the session is lost.
func (sk *SessionKeeper) Lost() <-chan struct{} { return sk.k.lost }

// Err is nil while the session is kept, then a *LockLostError.
func (sk *SessionKeeper) Err() error {
	if e := sk.k.lostErr(); e != nil {
		return e
	}
	return nil
}

// Deadline is the session's local validity deadline.
func (sk *SessionKeeper) Deadline() time.Time { return sk.k.getDeadline() }

// Close stops the keepalives and closes the session (releasing its holds), bounded by the
// ReleaseTimeout (default 2 s).
func (sk *SessionKeeper) Close(ctx context.Context) error {
	sk.k.halt()
	if e := sk.k.lostErr(); e != nil && e.Reason != LostValidityExhausted {
		return nil
	}
	timeout := sk.timeout
	if timeout <= 0 {
		timeout = DefaultReleaseTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := sk.c.CloseSession(ctx, sk.Session.ID)
	if IsSessionNotFound(err) && sk.k.lostErr() != nil {
		return nil
	}
	return err
}

// WithSession opens a session, keeps it alive while fn runs (fn's ctx is cancelled the moment it
// is lost), and closes it when fn returns. Errors as for WithLock.
func (c *Client) WithSession(ctx context.Context, o SessionOptions, fn func(ctx context.Context, s *Session) error) (err error) {
	sk, err := c.KeepSession(ctx, o)
	if err != nil {
		return err
	}
	bctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		select {
		case <-sk.Lost():
			cancel()
		case <-finished:
		}
	}()
	panicked := true
	defer func() {
		close(finished)
		cancel()
		closeErr := sk.Close(context.Background())
		if panicked {
			return
		}
		if closeErr != nil && err != nil {
			err = &ReleaseError{Err: err, Release: closeErr}
		}
		if err == nil {
			err = sk.Err()
		}
	}()
	err = fn(bctx, sk.Session)
	panicked = false
	return err
}

func decodeInto(body []byte, out any) error { return json.Unmarshal(body, out) }
