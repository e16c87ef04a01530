package lockservice

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The watchdog's rules, against the real service.

func TestWatchdogRenewsAtAThirdOfTheTTLWithJitter(t *testing.T) {
	ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
	ttl := 600 * time.Millisecond
	h, err := c.Acquire(ctx, k, AcquireOptions{TTL: ttl})
	must(t, err)
	time.Sleep(2500 * time.Millisecond)
	h.k.mu.Lock()
	renewals := append([]time.Time(nil), h.k.renewals...)
	delays := append([]time.Duration(nil), h.k.delays...)
	h.k.mu.Unlock()
	must(t, h.Release(ctx))
	if len(renewals) < 8 || h.Err() != nil {
		t.Fatalf("%d renewals in 2.5 s at ttl %v (%v)", len(renewals), ttl, h.Err())
	}
	lo, hi := ttl/3*9/10, ttl/3*11/10
	shortest, longest := time.Hour, time.Duration(0)
	var intervals []time.Duration
	for i, d := range delays {
		if d < lo || d > hi {
			t.Errorf("delay %d: %v; want %v … %v", i, d, lo, hi)
		}
		if d < shortest {
			shortest = d
		}
		if d > longest {
			longest = d
		}
		if i+1 < len(renewals) {
			interval := renewals[i+1].Sub(renewals[i])
			intervals = append(intervals, interval)
			if interval < d {
				t.Errorf("renewal %d came %v after the one before, sooner than its delay %v", i+1, interval, d)
			}
		}
	}
	if longest-shortest < 3*time.Millisecond {
		t.Errorf("no jitter: every delay within %v … %v", shortest, longest)
	}
	// On time, give or take the renew's round trip and the scheduler (the machine may be busy).
	sort.Slice(intervals, func(i, j int) bool { return intervals[i] < intervals[j] })
	if median := intervals[len(intervals)/2]; median > hi+50*time.Millisecond {
		t.Errorf("median interval %v; want about %v … %v", median, lo, hi)
	}
}

// parkWaiters parks the service's MAX_WAITERS waiters on k (held) until the returned func is called.
func parkWaiters(t *testing.T, c *Client, k string) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < env.MaxWaiters; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.AcquireGrant(ctx, k, AcquireOptions{Wait: 8 * time.Second})
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
	return func() { cancel(); wg.Wait() }
}

func TestAcquireHonoursRetryAfter(t *testing.T) {
	ctx, c, k := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "K")
	_, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	release := parkWaiters(t, c, k)
	defer release()
	rec := newRecorder()
	r := newClient(t, env.Service, env.AdminKey, Options{HTTPClient: &http.Client{Transport: rec}, RetryBudget: -1})
	_, err = r.AcquireGrant(ctx, k, AcquireOptions{Wait: 2500 * time.Millisecond})
	if !IsTooManyWaiters(err) {
		t.Fatalf("acquire: %v", err)
	}
	posts := rec.requests("POST", k)
	if len(posts) < 2 {
		t.Fatalf("%d attempts; a 429 within the wait is retried", len(posts))
	}
	for i := 1; i < len(posts); i++ {
		secs, err := strconv.Atoi(posts[i-1].retryAfter)
		if posts[i-1].status != 429 || err != nil {
			t.Fatalf("attempt %d: %d, Retry-After %q", i, posts[i-1].status, posts[i-1].retryAfter)
		}
		after, gap := time.Duration(secs)*time.Second, posts[i].at.Sub(posts[i-1].at)
		if gap < after || gap > after*12/10+250*time.Millisecond {
			t.Errorf("attempt %d came %v after a Retry-After of %v (want it, +0–20 %% jitter)", i+1, gap, after)
		}
	}
}

func TestAcquireReanchorsAfterAWait(t *testing.T) {
	ctx, c, k := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "K")
	a, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		_, _ = c.Release(context.Background(), KindLock, k, a.Token)
	}()
	rec := newRecorder()
	b := newClient(t, env.Service, env.AdminKey, Options{HTTPClient: &http.Client{Transport: rec}})
	h, err := b.Acquire(ctx, k, AcquireOptions{TTL: 3 * time.Second, Wait: 5 * time.Second, Manual: true})
	must(t, err)
	defer func() { _ = h.Release(ctx) }()
	posts, renews := rec.requests("POST", k), rec.requests("PUT", k+"/renew")
	if len(posts) != 1 || len(renews) != 1 {
		t.Fatalf("%d acquires, %d renews; want one of each", len(posts), len(renews))
	}
	fromAcquire := posts[0].at.Add(h.Grant.Validity())
	if !h.Deadline().After(fromAcquire.Add(time.Second)) || h.Deadline().After(renews[0].at.Add(3*time.Second)) {
		t.Fatalf("deadline %v after the acquire's send, %v after the renew's; validity %v",
			h.Deadline().Sub(posts[0].at), h.Deadline().Sub(renews[0].at), h.Grant.Validity())
	}
	if h.Remaining() < 2*time.Second {
		t.Fatalf("only %v left after the re-anchor", h.Remaining())
	}
}

func TestAcquireRetriesWithinItsBudget(t *testing.T) {
	t.Run("backend unavailable", func(t *testing.T) {
		ctx := ctxFor(t, 20*time.Second)
		fault := control(t, "/fault/reset")["service"].(string)
		control(t, "/fault/redis/kill")
		rec := newRecorder()
		c := newClient(t, fault, env.AdminKey, Options{HTTPClient: &http.Client{Transport: rec}, RetryBudget: 1500 * time.Millisecond})
		start := time.Now()
		_, err := c.AcquireGrant(ctx, uniqueKey(t, "K"), AcquireOptions{})
		took := time.Since(start)
		if !IsBackendUnavailable(err) {
			t.Fatalf("acquire: %v", err)
		}
		if n := len(rec.requests("POST", "")); n < 2 || took > 1500*time.Millisecond+800*time.Millisecond {
			t.Fatalf("%d attempts in %v with a budget of 1.5 s", n, took)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ctx := ctxFor(t, 10*time.Second)
		rec := newRecorder()
		c := newClient(t, "http://127.0.0.1:1", "", Options{HTTPClient: &http.Client{Transport: rec}, RetryBudget: 600 * time.Millisecond})
		start := time.Now()
		_, err := c.AcquireGrant(ctx, "k", AcquireOptions{})
		took := time.Since(start)
		if !IsUnreachable(err) || IsTimeout(err) {
			t.Fatalf("acquire: %v", err)
		}
		if n := len(rec.requests("POST", "")); n < 3 || took > 1200*time.Millisecond {
			t.Fatalf("%d attempts in %v with a budget of 600 ms", n, took)
		}
	})
	t.Run("no retry after a 409 without wait", func(t *testing.T) {
		ctx, c, k := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "K")
		_, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 5 * time.Second})
		must(t, err)
		rec := newRecorder()
		b := newClient(t, env.Service, env.AdminKey, Options{HTTPClient: &http.Client{Transport: rec}})
		if _, err := b.AcquireGrant(ctx, k, AcquireOptions{}); !IsLockHeld(err) || len(rec.requests("POST", k)) != 1 {
			t.Fatalf("acquire: %v after %d attempts", err, len(rec.requests("POST", k)))
		}
	})
}

// A retried acquire sends the same token and only the wait that is left.
func TestRetrySendsSameTokenAndRemainingWait(t *testing.T) {
	ctx, c, k := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "K")
	_, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	must(t, err)
	release := parkWaiters(t, c, k)
	defer release()
	bodies := &bodyRecorder{base: http.DefaultTransport.(*http.Transport).Clone()}
	r := newClient(t, env.Service, env.AdminKey, Options{HTTPClient: &http.Client{Transport: bodies}, RetryBudget: -1})
	_, _ = r.AcquireGrant(ctx, k, AcquireOptions{Wait: 2500 * time.Millisecond})
	bodies.mu.Lock()
	defer bodies.mu.Unlock()
	if len(bodies.bodies) < 2 {
		t.Fatalf("%d attempts", len(bodies.bodies))
	}
	first, second := bodies.bodies[0], bodies.bodies[1]
	if first.Token == "" || first.Token != second.Token {
		t.Fatal("the retry sent another token")
	}
	if first.WaitMs < 2400 || second.WaitMs >= first.WaitMs-900 {
		t.Fatalf("waits sent: %d then %d ms", first.WaitMs, second.WaitMs)
	}
}

type bodyRecorder struct {
	mu     sync.Mutex
	base   http.RoundTripper
	bodies []acquireBody
}

func (b *bodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		var body acquireBody
		raw, _ := req.GetBody()
		buf := new(strings.Builder)
		_, _ = copyAll(buf, raw)
		_ = jsonUnmarshal(buf.String(), &body)
		b.mu.Lock()
		b.bodies = append(b.bodies, body)
		b.mu.Unlock()
	}
	return b.base.RoundTrip(req)
}
