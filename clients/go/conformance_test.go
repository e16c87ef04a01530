package lockservice

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"
)

// scenarios: one test per id of clients/conformance/scenarios.json.
var scenarios = map[string]func(t *testing.T){
	"acquire_release":        acquireRelease,
	"contention_owners":      contentionOwners,
	"waiting_handoff":        waitingHandoff,
	"renew_keeps_fence":      renewKeepsFence,
	"watchdog_keeps_hold":    watchdogKeepsHold,
	"starved_caller":         starvedCaller,
	"force_release_signal":   forceReleaseSignal,
	"redis_killed_signal":    redisKilledSignal,
	"dropped_response_retry": droppedResponseRetry,
	"caller_error_surfaces":  callerErrorSurfaces,
	"release_bounded":        releaseBounded,
	"max_hold":               maxHold,
	"session_two_holds":      sessionTwoHolds,
	"semaphore_weights":      semaphoreWeights,
	"rwlock_readers_writer":  rwlockReadersWriter,
	"watch":                  watchScenario,
	"inspect_and_list":       inspectAndList,
	"typed_errors":           typedErrors,
	"bad_arguments":          badArguments,
	"fence_check":            fenceCheck,
	"lock_delay":             lockDelay,
}

func scenarioIDs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "clients", "conformance", "scenarios.json"))
	must(t, err)
	var file struct {
		Scenarios []struct {
			ID string `json:"id"`
		} `json:"scenarios"`
	}
	must(t, json.Unmarshal(raw, &file))
	ids := make([]string, 0, len(file.Scenarios))
	for _, s := range file.Scenarios {
		ids = append(ids, s.ID)
	}
	return ids
}

// TestConformance runs every scenario, one at a time, in the file's order.
func TestConformance(t *testing.T) {
	for _, id := range scenarioIDs(t) {
		fn, ok := scenarios[id]
		if !ok {
			fn = func(t *testing.T) { t.Fatalf("scenario %s has no test in the Go client", id) }
		}
		t.Run(id, fn)
	}
}

// TestScenarioCoverage fails when a scenario id has no test, or a test no scenario.
func TestScenarioCoverage(t *testing.T) {
	ids := scenarioIDs(t)
	if len(ids) == 0 {
		t.Fatal("scenarios.json lists no scenario")
	}
	listed := map[string]bool{}
	for _, id := range ids {
		listed[id] = true
		if scenarios[id] == nil {
			t.Errorf("scenario %s has no test", id)
		}
	}
	var extra []string
	for id := range scenarios {
		if !listed[id] {
			extra = append(extra, id)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("tests for scenarios scenarios.json does not list: %v", extra)
	}
}

func acquireRelease(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	g, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 5 * time.Second})
	must(t, err)
	if len(g.Token) < 16 || g.Fence <= 0 || g.ValidityMs <= 0 || g.ValidityMs > 5000 || g.ExpiresAt.IsZero() || g.TTLMs != 5000 {
		t.Fatalf("grant %+v", g)
	}
	info, err := c.InspectLock(ctx, k)
	must(t, err)
	if info.Fence != g.Fence {
		t.Fatalf("inspect fence %d, grant %d", info.Fence, g.Fence)
	}
	r, err := c.Release(ctx, KindLock, k, g.Token)
	must(t, err)
	if !r.Released || r.HoldCount != 0 {
		t.Fatalf("release %+v", r)
	}
	if _, err := c.InspectLock(ctx, k); !IsLockNotFound(err) || !errors.Is(err, ErrLockNotFound) {
		t.Fatalf("inspect after release: %v", err)
	}
}

func contentionOwners(t *testing.T) {
	ctx, a, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	_, err := a.AcquireGrant(ctx, k, AcquireOptions{TTL: 5 * time.Second, Owner: "worker-a"})
	must(t, err)
	rec := newRecorder()
	b := newClient(t, env.Service, env.AdminKey, Options{HTTPClient: &http.Client{Transport: rec}})
	start := time.Now()
	_, err = b.AcquireGrant(ctx, k, AcquireOptions{})
	elapsed := time.Since(start)
	e, ok := ServiceError(err)
	if !IsLockHeld(err) || !ok || e.RetryAfter <= 0 || !contains(e.Owners, "worker-a") {
		t.Fatalf("B: %v (%+v)", err, e)
	}
	if n := len(rec.requests("POST", k)); n != 1 || elapsed > time.Second {
		t.Fatalf("B sent %d acquires in %v; want 1 within 1 s", n, elapsed)
	}
}

func waitingHandoff(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	a, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	type result struct {
		g   *Grant
		err error
		at  time.Time
	}
	got := make(chan result, 1)
	go func() {
		g, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second, Wait: 5 * time.Second})
		got <- result{g, err, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond)
	_, err = c.Release(ctx, KindLock, k, a.Token)
	must(t, err)
	released := time.Now()
	b := <-got
	must(t, b.err)
	if d := b.at.Sub(released); d > time.Second {
		t.Fatalf("B granted %v after the release", d)
	}
	if b.g.Fence <= a.Fence {
		t.Fatalf("B's fence %d not above A's %d", b.g.Fence, a.Fence)
	}
	info, err := c.InspectLock(ctx, k)
	must(t, err)
	if info.Fence != b.g.Fence {
		t.Fatalf("inspect fence %d, B's %d", info.Fence, b.g.Fence)
	}
}

func renewKeepsFence(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	g, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: time.Second})
	must(t, err)
	time.Sleep(600 * time.Millisecond)
	r, err := c.Renew(ctx, KindLock, k, g.Token, 2*time.Second)
	must(t, err)
	if r.Fence != g.Fence || r.ValidityMs <= 1000 || r.ValidityMs > 2000 {
		t.Fatalf("renew %+v (grant fence %d)", r, g.Fence)
	}
	time.Sleep(600 * time.Millisecond)
	info, err := c.InspectLock(ctx, k)
	must(t, err)
	if info.Fence != g.Fence {
		t.Fatalf("fence %d after renew, want %d", info.Fence, g.Fence)
	}
}

func watchdogKeepsHold(t *testing.T) {
	ctx, c, k := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "K")
	err := c.WithLock(ctx, k, AcquireOptions{TTL: time.Second}, func(ctx context.Context, h *Hold) error {
		select {
		case <-ctx.Done():
			t.Fatalf("lost while sleeping: %v", h.Err())
		case <-time.After(3500 * time.Millisecond):
		}
		info, err := c.InspectLock(ctx, k)
		must(t, err)
		if info.Fence != h.Fence || h.Err() != nil {
			t.Fatalf("inspect fence %d, hold's %d, err %v", info.Fence, h.Fence, h.Err())
		}
		return nil
	})
	must(t, err)
	if _, err := c.InspectLock(ctx, k); !IsLockNotFound(err) {
		t.Fatalf("after WithLock: %v", err)
	}
}

func starvedCaller(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	err := c.WithLock(ctx, k, AcquireOptions{TTL: 1500 * time.Millisecond}, func(ctx context.Context, h *Hold) error {
		start := time.Now()
		spins := 0
		for time.Since(start) < 1200*time.Millisecond {
			spins++
		}
		info, err := c.InspectLock(ctx, k)
		must(t, err)
		if info.Fence != h.Fence || ctx.Err() != nil || h.Remaining() <= 0 {
			t.Fatalf("after a busy block: fence %d (hold %d), ctx %v, remaining %v", info.Fence, h.Fence, ctx.Err(), h.Remaining())
		}
		return nil
	})
	must(t, err)
}

func forceReleaseSignal(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	released := false
	err := c.WithLock(ctx, k, AcquireOptions{TTL: 10 * time.Second, OnReleaseError: func(string, error) { released = true }},
		func(ctx context.Context, h *Hold) error {
			time.Sleep(300 * time.Millisecond)
			_, err := c.ForceReleaseLock(context.Background(), k)
			must(t, err)
			answered := time.Now()
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
				t.Fatal("no loss signal within 2 s")
			}
			latency := time.Since(answered)
			t.Logf("loss signal %v after the force-release's answer", latency)
			if latency > 200*time.Millisecond {
				t.Fatalf("loss signalled %v after the force-release", latency)
			}
			if LossReasonOf(ctx) != LostForceReleased || h.Reason() != LostForceReleased {
				t.Fatalf("reason %q", LossReasonOf(ctx))
			}
			return nil
		})
	var lost *LockLostError
	var rel *ReleaseError
	if !errors.As(err, &lost) || lost.Reason != LostForceReleased || errors.As(err, &rel) || released {
		t.Fatalf("WithLock: %v (release error reported: %v)", err, released)
	}
}

func redisKilledSignal(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	fault := control(t, "/fault/reset")["service"].(string)
	c, k := newClient(t, fault, env.AdminKey, Options{}), uniqueKey(t, "K")
	err := c.WithLock(ctx, k, AcquireOptions{TTL: 2 * time.Second}, func(ctx context.Context, h *Hold) error {
		time.Sleep(300 * time.Millisecond)
		control(t, "/fault/redis/kill")
		killed := time.Now()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("no loss signal within 5 s")
		}
		signalled := time.Now()
		t.Logf("loss signal %v after the kill, %v before the local validity deadline (%s)",
			signalled.Sub(killed), h.Deadline().Sub(signalled), h.Reason())
		if !signalled.Before(h.Deadline()) {
			t.Fatalf("signalled %v after the deadline", signalled.Sub(h.Deadline()))
		}
		return h.Err()
	})
	var lost *LockLostError
	if !errors.As(err, &lost) || IsUnreachable(err) {
		t.Fatalf("WithLock: %v", err)
	}
}

func droppedResponseRetry(t *testing.T) {
	ctx, k := ctxFor(t, 15*time.Second), uniqueKey(t, "K")
	p := newClient(t, env.Proxied, env.AdminKey, Options{HTTPClient: &http.Client{Transport: newRecorder()}})
	control(t, "/proxy/drop-next-response")
	g, err := p.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	info, err := admin(t).InspectLock(ctx, k)
	must(t, err)
	if info.Fence != g.Fence || g.Created {
		t.Fatalf("inspect fence %d, library's %d, created (201) %v", info.Fence, g.Fence, g.Created)
	}
}

type callerError struct{ msg string }

func (e *callerError) Error() string { return e.msg }

func callerErrorSurfaces(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	mine := &callerError{"the caller's own failure"}
	err := c.WithLock(ctx, k, AcquireOptions{TTL: 5 * time.Second}, func(ctx context.Context, h *Hold) error { return mine })
	var got *callerError
	if err != mine || !errors.As(err, &got) || err.Error() != "the caller's own failure" {
		t.Fatalf("WithLock: %#v", err)
	}
	if _, err := c.InspectLock(ctx, k); !IsLockNotFound(err) {
		t.Fatalf("after WithLock: %v", err)
	}
}

func releaseBounded(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	fault := control(t, "/fault/reset")["service"].(string)
	c, k := newClient(t, fault, env.AdminKey, Options{}), uniqueKey(t, "K")
	var releaseErr error
	result := 0
	var returned time.Time
	t.Cleanup(func() { control(t, "/fault/redis/resume") })
	err := c.WithLock(ctx, k, AcquireOptions{TTL: 10 * time.Second, ReleaseTimeout: 300 * time.Millisecond,
		OnReleaseError: func(_ string, err error) { releaseErr = err }},
		func(ctx context.Context, h *Hold) error {
			control(t, "/fault/redis/pause")
			result = 42
			returned = time.Now()
			return nil
		})
	took := time.Since(returned)
	t.Logf("WithLock returned %v after the block (release timeout 300ms): %v", took, releaseErr)
	if took > time.Second {
		t.Fatalf("WithLock took %v after the block", took)
	}
	if err != nil || result != 42 || releaseErr == nil {
		t.Fatalf("WithLock: %v, result %d, release failure %v", err, result, releaseErr)
	}
}

func maxHold(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	start := time.Now()
	var signalled time.Time
	err := c.WithLock(ctx, k, AcquireOptions{TTL: time.Second, MaxHold: 1500 * time.Millisecond}, func(ctx context.Context, h *Hold) error {
		select {
		case <-ctx.Done():
		case <-time.After(4 * time.Second):
			t.Fatal("no loss signal within 4 s")
		}
		signalled = time.Now()
		if LossReasonOf(ctx) != LostMaxHold {
			t.Fatalf("reason %q", LossReasonOf(ctx))
		}
		return nil
	})
	if d := signalled.Sub(start); d < 1300*time.Millisecond || d > 2600*time.Millisecond {
		t.Fatalf("signalled %v after the acquire", d)
	}
	var lost *LockLostError
	if !errors.As(err, &lost) || lost.Reason != LostMaxHold {
		t.Fatalf("WithLock: %v", err)
	}
	for {
		_, err := c.InspectLock(ctx, k)
		if IsLockNotFound(err) {
			break
		}
		if time.Since(signalled) > 1100*time.Millisecond {
			t.Fatalf("still held %v after the signal (%v)", time.Since(signalled), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sessionTwoHolds(t *testing.T) {
	ctx, c := ctxFor(t, 15*time.Second), admin(t)
	k1, k2 := uniqueKey(t, "K1"), uniqueKey(t, "K2")
	sk, err := c.KeepSession(ctx, SessionOptions{TTL: time.Second})
	must(t, err)
	g1, err := c.AcquireGrant(ctx, k1, AcquireOptions{Session: sk.Session.ID})
	must(t, err)
	g2, err := c.AcquireGrant(ctx, k2, AcquireOptions{Kind: KindWrite, Session: sk.Session.ID})
	must(t, err)
	watched := make(chan *WatchEvent, 1)
	go func() {
		ev, err := c.Watch(ctx, KindLock, k1, g1.Token, 10*time.Second)
		if err != nil {
			ev = &WatchEvent{Held: true, Reason: LossReason(err.Error())}
		}
		watched <- ev
	}()
	time.Sleep(2500 * time.Millisecond)
	if sk.Err() != nil {
		t.Fatalf("session lost: %v", sk.Err())
	}
	l, err := c.InspectLock(ctx, k1)
	must(t, err)
	rw, err := c.InspectRWLock(ctx, k2, false)
	must(t, err)
	if l.Fence != g1.Fence || rw.Writer == nil || rw.Writer.Fence != g2.Fence {
		t.Fatalf("after 2.5 s: lock %+v, rwlock %+v", l, rw)
	}
	must(t, sk.Close(ctx))
	if _, err := c.InspectLock(ctx, k1); !IsLockNotFound(err) {
		t.Fatalf("K1 after close: %v", err)
	}
	if rw, err := c.InspectRWLock(ctx, k2, false); !IsLockNotFound(err) && (err != nil || rw.Writer != nil) {
		t.Fatalf("K2 after close: %+v %v", rw, err)
	}
	select {
	case ev := <-watched:
		if ev.Held || ev.Reason != LostSessionLost {
			t.Fatalf("watch on K1: %+v", ev)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the watch on K1 did not answer")
	}
}

func semaphoreWeights(t *testing.T) {
	ctx, c, s := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "S")
	sem := func(limit, permits int) (*Grant, error) {
		return c.AcquireGrant(ctx, s, AcquireOptions{Kind: KindPermit, Limit: limit, Permits: permits, TTL: 10 * time.Second})
	}
	_, err := sem(3, 2)
	must(t, err)
	_, err = sem(3, 1)
	must(t, err)
	if _, err := sem(3, 1); !IsLockHeld(err) {
		t.Fatalf("third: %v", err)
	}
	_, err = sem(5, 1)
	if e, ok := ServiceError(err); !IsLimitMismatch(err) || !ok || e.Limit != 3 {
		t.Fatalf("fourth: %v", err)
	}
	info, err := c.InspectSemaphore(ctx, s, false)
	must(t, err)
	if info.PermitsInUse != 3 || info.Limit != 3 {
		t.Fatalf("inspect %+v", info)
	}
}

func rwlockReadersWriter(t *testing.T) {
	ctx, c, r := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "R")
	read := AcquireOptions{Kind: KindRead, TTL: 10 * time.Second}
	r1, err := c.AcquireGrant(ctx, r, read)
	must(t, err)
	r2, err := c.AcquireGrant(ctx, r, read)
	must(t, err)
	if r1.Token == r2.Token {
		t.Fatal("two reads with one token")
	}
	if _, err := c.AcquireGrant(ctx, r, AcquireOptions{Kind: KindWrite}); !IsLockHeld(err) {
		t.Fatalf("first write: %v", err)
	}
	_, err = c.Release(ctx, KindRead, r, r1.Token)
	must(t, err)
	_, err = c.Release(ctx, KindRead, r, r2.Token)
	must(t, err)
	w, err := c.AcquireGrant(ctx, r, AcquireOptions{Kind: KindWrite})
	must(t, err)
	if w.Mode != KindWrite {
		t.Fatalf("second write %+v", w)
	}
}

func watchScenario(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	g, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	ev, err := c.Watch(ctx, KindLock, k, g.Token, time.Second)
	must(t, err)
	if !ev.Held || ev.RemainingMs <= 0 {
		t.Fatalf("long poll %+v", ev)
	}
	s, err := c.WatchStream(ctx, KindLock, k, g.Token, 10*time.Second)
	must(t, err)
	defer s.Close()
	if !s.Next() || !s.Event().Held {
		t.Fatalf("first stream event %+v, %v", s.Event(), s.Err())
	}
	_, err = c.Release(ctx, KindLock, k, g.Token)
	must(t, err)
	released := time.Now()
	if !s.Next() {
		t.Fatalf("stream ended: %v", s.Err())
	}
	d := time.Since(released)
	if e := s.Event(); e.Held || e.Reason != LostReleased || d > 500*time.Millisecond {
		t.Fatalf("event %+v %v after the release", e, d)
	}
	if s.Next() {
		t.Fatalf("an event after lost: %+v", s.Event())
	}
}

func inspectAndList(t *testing.T) {
	ctx, c := ctxFor(t, 10*time.Second), admin(t)
	p := uniqueKey(t, "P")
	for _, k := range []string{p + ":a", p + ":b"} {
		_, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
		must(t, err)
	}
	keys := func() []string {
		l, err := c.ListLocks(ctx, ListOptions{Prefix: p + ":"})
		must(t, err)
		var ks []string
		for _, i := range l.Items {
			ks = append(ks, i.Key)
		}
		sort.Strings(ks)
		return ks
	}
	if ks := keys(); len(ks) != 2 || ks[0] != p+":a" || ks[1] != p+":b" {
		t.Fatalf("first listing %v", ks)
	}
	r, err := c.ForceReleaseLock(ctx, p+":a")
	must(t, err)
	if !r.Released {
		t.Fatalf("force-release %+v", r)
	}
	if ks := keys(); len(ks) != 1 || ks[0] != p+":b" {
		t.Fatalf("second listing %v", ks)
	}
}

func typedErrors(t *testing.T) {
	ctx, c, k := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "K")
	described := func(what string, err error, is func(error) bool, sentinel error) {
		t.Helper()
		e, ok := ServiceError(err)
		if !is(err) || !errors.Is(err, sentinel) || !ok || e.Message == "" || e.RequestID == "" {
			t.Fatalf("%s: %#v", what, err)
		}
	}
	a, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	_, err = c.Renew(ctx, KindLock, k, NewToken(), 0)
	described("renew with another token", err, IsNotOwner, ErrNotOwner)
	_, err = c.Release(ctx, KindLock, uniqueKey(t, "free"), NewToken())
	described("release of a free key", err, IsLockNotFound, ErrLockNotFound)
	_, err = newClient(t, env.Service, "", Options{}).AcquireGrant(ctx, uniqueKey(t, "x"), AcquireOptions{})
	described("no API key", err, IsUnauthorized, ErrUnauthorized)
	_, err = newClient(t, env.Service, env.ScopedKey, Options{}).AcquireGrant(ctx, uniqueKey(t, "x"), AcquireOptions{})
	described("outside the scoped prefix", err, IsForbidden, ErrForbidden)

	wctx, stopWaiters := context.WithCancel(ctx)
	var parked sync.WaitGroup
	for i := 0; i < env.MaxWaiters; i++ {
		parked.Add(1)
		go func() {
			defer parked.Done()
			_, _ = c.AcquireGrant(wctx, k, AcquireOptions{Wait: 8 * time.Second})
		}()
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		info, err := c.InspectLock(ctx, k)
		must(t, err)
		if info.Waiters >= env.MaxWaiters {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d waiters parked", info.Waiters)
		}
		time.Sleep(20 * time.Millisecond)
	}
	noRetry := newClient(t, env.Service, env.AdminKey, Options{RetryBudget: -1})
	_, err = noRetry.AcquireGrant(ctx, k, AcquireOptions{Wait: 300 * time.Millisecond})
	described("one waiter too many", err, IsTooManyWaiters, ErrTooManyWaiters)
	stopWaiters()
	parked.Wait()
	_, err = c.Release(ctx, KindLock, k, a.Token)
	must(t, err)

	_, err = c.KeepaliveSession(ctx, "s.AAAAAAAAAAAAAAAAAAAAAA")
	described("keepalive of an unknown session", err, IsSessionNotFound, ErrSessionNotFound)
}

func badArguments(t *testing.T) {
	ctx := ctxFor(t, 5*time.Second)
	c := newClient(t, "http://127.0.0.1:1", "", Options{})
	cases := []struct {
		name, key, arg string
		o              AcquireOptions
	}{
		{"empty key", "", "key", AcquireOptions{}},
		{"key with a space", "a b", "key", AcquireOptions{}},
		{"ttl 50 ms", "k", "ttl", AcquireOptions{TTL: 50 * time.Millisecond}},
		{"permits 0", "s", "permits", AcquireOptions{Kind: KindPermit, Limit: 3, Permits: 0}},
		{"permits over the limit", "s", "permits", AcquireOptions{Kind: KindPermit, Limit: 3, Permits: 4}},
		{"token of 3 characters", "k", "token", AcquireOptions{Token: "abc"}},
	}
	for _, tc := range cases {
		start := time.Now()
		_, err := c.AcquireGrant(ctx, tc.key, tc.o)
		var ia *InvalidArgumentError
		if !errors.As(err, &ia) || ia.Argument != tc.arg || IsUnreachable(err) || time.Since(start) > 50*time.Millisecond {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err := c.WithLock(ctx, tc.key, tc.o, func(context.Context, *Hold) error { return nil }); !IsInvalidArgument(err) {
			t.Errorf("%s (WithLock): %v", tc.name, err)
		}
	}
}

func fenceCheck(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	expect := func(what string, got *FenceCheck, err error, current bool, fence int64, held bool) {
		t.Helper()
		must(t, err)
		if got.Current != current || got.Held != held || (fence == 0) != (got.Fence == nil) || (got.Fence != nil && *got.Fence != fence) {
			t.Fatalf("%s: %+v (fence %v), want current=%v fence=%d held=%v", what, got, got.Fence, current, fence, held)
		}
	}
	g, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	got, err := c.CheckFence(ctx, KindLock, k, g.Fence)
	expect("its own fence", got, err, true, g.Fence, true)
	got, err = c.CheckFence(ctx, KindLock, k, g.Fence-1)
	expect("fence − 1", got, err, false, g.Fence, true)
	_, err = c.Release(ctx, KindLock, k, g.Token)
	must(t, err)
	got, err = c.CheckFence(ctx, KindLock, k, g.Fence)
	expect("after the release", got, err, false, 0, false)
	readOnly := newClient(t, env.Service, env.ReadOnlyKey, Options{})
	got, err = readOnly.CheckFence(ctx, KindLock, k, g.Fence)
	expect("the read-only key's check", got, err, false, 0, false)
	if _, err := readOnly.AcquireGrant(ctx, k, AcquireOptions{}); !IsForbidden(err) || !errors.Is(err, ErrForbidden) {
		t.Fatalf("the read-only key's acquire: %v, want forbidden", err)
	}
	offline := newClient(t, "http://127.0.0.1:1", "", Options{})
	for _, fence := range []int64{0, -1, 1 << 53} {
		var ia *InvalidArgumentError
		if _, err := offline.CheckFence(ctx, KindLock, k, fence); !errors.As(err, &ia) || ia.Argument != "fence" {
			t.Errorf("fence %d: %v, want the invalid-argument error naming fence", fence, err)
		}
	}
}

func lockDelay(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	sent := time.Now()
	_, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 300 * time.Millisecond, LockDelay: time.Second})
	must(t, err)
	time.Sleep(400 * time.Millisecond)
	_, err = c.AcquireGrant(ctx, k, AcquireOptions{})
	e, ok := ServiceError(err)
	if !IsLockDelayed(err) || !errors.Is(err, ErrLockDelayed) || !ok || e.RetryAfter <= 0 || e.DelayedUntil.IsZero() {
		t.Fatalf("an acquire after the lapse: %#v, want lock_delayed with RetryAfter and DelayedUntil", err)
	}
	_, err = c.AcquireGrant(ctx, k, AcquireOptions{Wait: 2 * time.Second})
	must(t, err)
	if after := time.Since(sent); after < 1300*time.Millisecond || after >= 2300*time.Millisecond {
		t.Fatalf("the waiter was granted %v after the first acquire, want in [1.3 s, 2.3 s)", after)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
