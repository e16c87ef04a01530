package lockservice

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRenewAnsweringNotFoundLosesTheHoldAndStopsRenewing(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	rec := newRecorder()
	r := newClient(t, env.Service, env.AdminKey, Options{HTTPClient: &http.Client{Transport: rec}})
	h, err := r.Acquire(ctx, k, AcquireOptions{TTL: 600 * time.Millisecond, NoWatch: true})
	must(t, err)
	_, err = c.ForceReleaseLock(ctx, k)
	must(t, err)
	select {
	case <-h.Lost():
	case <-time.After(time.Second):
		t.Fatal("no loss signal within a second (the next renew is due in 200 ms)")
	}
	if h.Reason() != LostNotHeld || !IsLockLost(h.Err()) {
		t.Fatalf("reason %q: %v", h.Reason(), h.Err())
	}
	renews := len(rec.requests("PUT", "/renew"))
	time.Sleep(700 * time.Millisecond)
	if n := len(rec.requests("PUT", "/renew")); n != renews {
		t.Fatalf("%d renews after the loss", n-renews)
	}
	must(t, h.Release(ctx)) // gone: nothing to release, no error
}

func TestWithLockEveryKindOfHold(t *testing.T) {
	ctx, c := ctxFor(t, 15*time.Second), admin(t)
	for _, o := range []AcquireOptions{
		{Kind: KindLock}, {Kind: KindRead}, {Kind: KindWrite}, {Kind: KindPermit, Limit: 2, Permits: 2},
	} {
		k := uniqueKey(t, string(o.kind()))
		o.TTL = 600 * time.Millisecond
		err := c.WithLock(ctx, k, o, func(ctx context.Context, h *Hold) error {
			time.Sleep(time.Second)
			if h.Kind != o.kind() || h.Fence <= 0 || ctx.Err() != nil {
				t.Errorf("%s: hold %+v, ctx %v", o.kind(), h, ctx.Err())
			}
			switch o.kind() {
			case KindLock:
				info, err := c.InspectLock(ctx, k)
				must(t, err)
				if info.Fence != h.Fence {
					t.Errorf("lock fence %d", info.Fence)
				}
			case KindRead, KindWrite:
				info, err := c.InspectRWLock(ctx, k, false)
				must(t, err)
				if (o.kind() == KindRead) != (info.Readers == 1) || (o.kind() == KindWrite) != (info.Writer != nil) {
					t.Errorf("%s: %+v", o.kind(), info)
				}
			case KindPermit:
				info, err := c.InspectSemaphore(ctx, k, false)
				must(t, err)
				if info.PermitsInUse != 2 {
					t.Errorf("semaphore %+v", info)
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", o.kind(), err)
		}
	}
}

func TestWithLockBoundToASession(t *testing.T) {
	ctx, c, k := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "K")
	s, err := c.OpenSession(ctx, SessionOptions{TTL: 600 * time.Millisecond, Owner: "go-test"})
	must(t, err)
	err = c.WithLock(ctx, k, AcquireOptions{Session: s.ID}, func(ctx context.Context, h *Hold) error {
		time.Sleep(1500 * time.Millisecond) // the watchdog's keepalives keep the session and the hold
		info, err := c.InspectLock(ctx, k)
		if err != nil || info.Fence != h.Fence || info.Owner != "go-test" {
			t.Fatalf("after 1.5 s: %+v %v", info, err)
		}
		_, err = c.CloseSession(context.Background(), s.ID)
		must(t, err)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("no loss signal after the session was closed")
		}
		return h.Err()
	})
	var lost *LockLostError
	if !errors.As(err, &lost) || lost.Reason != LostSessionLost {
		t.Fatalf("WithLock: %v", err)
	}
}

func TestWithSessionKeepsItAndClosesIt(t *testing.T) {
	ctx, c, k := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "K")
	var id string
	err := c.WithSession(ctx, SessionOptions{TTL: 600 * time.Millisecond}, func(ctx context.Context, s *Session) error {
		id = s.ID
		_, err := c.AcquireGrant(ctx, k, AcquireOptions{Session: s.ID})
		must(t, err)
		time.Sleep(1500 * time.Millisecond)
		_, err = c.InspectLock(ctx, k)
		return err
	})
	must(t, err)
	if _, err := c.InspectSession(ctx, id); !IsSessionNotFound(err) {
		t.Fatalf("session after WithSession: %v", err)
	}
	if _, err := c.InspectLock(ctx, k); !IsLockNotFound(err) {
		t.Fatalf("its hold after WithSession: %v", err)
	}
}

func TestAFailedReleaseIsAttachedToTheCallersError(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	fault := control(t, "/fault/reset")["service"].(string)
	c, k := newClient(t, fault, env.AdminKey, Options{}), uniqueKey(t, "K")
	t.Cleanup(func() { control(t, "/fault/redis/resume") })
	mine := &callerError{"mine"}
	err := c.WithLock(ctx, k, AcquireOptions{TTL: 10 * time.Second, ReleaseTimeout: 300 * time.Millisecond},
		func(ctx context.Context, h *Hold) error {
			control(t, "/fault/redis/pause")
			return mine
		})
	var rel *ReleaseError
	var got *callerError
	if !errors.As(err, &rel) || rel.Release == nil || !errors.As(err, &got) || got != mine || !errors.Is(err, mine) {
		t.Fatalf("WithLock: %v", err)
	}
}

func TestAPanicInTheBlockReleasesTheHold(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v", r)
			}
		}()
		_ = c.WithLock(ctx, k, AcquireOptions{TTL: 5 * time.Second}, func(context.Context, *Hold) error { panic("boom") })
	}()
	if _, err := c.InspectLock(ctx, k); !IsLockNotFound(err) {
		t.Fatalf("after the panic: %v", err)
	}
}

func TestErrorsNeverShowASessionID(t *testing.T) {
	ctx := ctxFor(t, 5*time.Second)
	c := newClient(t, "http://127.0.0.1:1", "", Options{})
	id := "s.SECRETSECRETSECRETSECR"
	_, err := c.KeepaliveSession(ctx, id)
	if !IsUnreachable(err) || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "/sessions/[redacted]/keepalive") {
		t.Fatalf("keepalive error: %v", err)
	}
}

func TestReleaseTwiceReleasesOnce(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	h, err := c.Acquire(ctx, k, AcquireOptions{TTL: 5 * time.Second})
	must(t, err)
	must(t, h.Release(ctx))
	must(t, h.Release(ctx))
	if _, err := c.InspectLock(ctx, k); !IsLockNotFound(err) {
		t.Fatalf("after release: %v", err)
	}
}

func TestSessionKeeperSignalsAClosedSession(t *testing.T) {
	ctx, c := ctxFor(t, 10*time.Second), admin(t)
	sk, err := c.KeepSession(ctx, SessionOptions{TTL: 5 * time.Second})
	must(t, err)
	time.Sleep(100 * time.Millisecond) // the watch is parked
	_, err = c.CloseSession(ctx, sk.Session.ID)
	must(t, err)
	closed := time.Now()
	select {
	case <-sk.Lost():
	case <-time.After(time.Second):
		t.Fatal("no loss signal within a second of the close (the keepalive is due in 1.7 s)")
	}
	t.Logf("session loss signalled %v after the close", time.Since(closed))
	var lost *LockLostError
	if !errors.As(sk.Err(), &lost) || lost.Reason != LostReleased {
		t.Fatalf("err %v", sk.Err())
	}
	must(t, sk.Close(ctx))
}

// cancelAfterPost lets a POST reach the service, then cancels the caller's ctx before the answer
// is seen: a grant the caller never learns of.
type cancelAfterPost struct {
	base   http.RoundTripper
	cancel context.CancelFunc
}

func (c *cancelAfterPost) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	resp.Body.Close()
	c.cancel()
	return nil, context.Canceled
}

func TestAnAcquireGivenUpReleasesAGrantItDidNotSee(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	actx, cancel := context.WithCancel(ctx)
	r := newClient(t, env.Service, env.AdminKey, Options{HTTPClient: &http.Client{Transport: &cancelAfterPost{newRecorder(), cancel}}})
	if _, err := r.AcquireGrant(actx, k, AcquireOptions{TTL: 10 * time.Second}); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire: %v", err)
	}
	if _, err := c.InspectLock(ctx, k); !IsLockNotFound(err) {
		t.Fatalf("the unseen grant is still held: %v", err)
	}
}

func TestErrSeesAPassedDeadlineBeforeTheWatchdog(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	h, err := c.Acquire(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	defer func() { _ = h.Release(ctx) }()
	h.k.mu.Lock()
	h.k.deadline = time.Now().Add(-time.Millisecond) // as after a pause past the validity
	h.k.mu.Unlock()
	var lost *LockLostError
	if !errors.As(h.Err(), &lost) || lost.Reason != LostValidityExhausted {
		t.Fatalf("Err: %v", h.Err())
	}
	select {
	case <-h.Lost():
	default:
		t.Fatal("Err saw the loss but Lost() is open")
	}
}

func TestAReentrantAcquireIsNotResentAfterNoAnswer(t *testing.T) {
	ctx, k := ctxFor(t, 10*time.Second), uniqueKey(t, "K")
	rec := newRecorder()
	p := newClient(t, env.Proxied, env.AdminKey, Options{HTTPClient: &http.Client{Transport: rec}})
	control(t, "/proxy/drop-next-response")
	_, err := p.AcquireGrant(ctx, k, AcquireOptions{TTL: time.Second, Reentrant: true})
	if !IsUnreachable(err) || len(rec.requests("POST", k)) != 1 {
		t.Fatalf("acquire: %v after %d attempts", err, len(rec.requests("POST", k)))
	}
}

func TestLockDelayKeepsAVanishedHoldersLockFree(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	_, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 200 * time.Millisecond, LockDelay: 2 * time.Second}) // never renewed
	must(t, err)
	time.Sleep(400 * time.Millisecond)
	_, err = c.AcquireGrant(ctx, k, AcquireOptions{})
	e, ok := ServiceError(err)
	if !IsLockDelayed(err) || !errors.Is(err, ErrLockDelayed) || !ok || time.Until(e.DelayedUntil) <= 0 || e.RetryAfter <= 0 {
		t.Fatalf("acquire in the delay: %v (%+v)", err, e)
	}
}

func TestSessionLockDelayIsSent(t *testing.T) {
	ctx, c := ctxFor(t, 5*time.Second), admin(t)
	s, err := c.OpenSession(ctx, SessionOptions{TTL: 5 * time.Second, LockDelay: 1500 * time.Millisecond})
	must(t, err)
	defer func() { _, _ = c.CloseSession(context.Background(), s.ID) }()
	if s.LockDelayMs != 1500 {
		t.Fatalf("the session's lockDelayMs: %d, want 1500", s.LockDelayMs)
	}
}
