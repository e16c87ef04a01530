package lockservice

import (
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math/rand"
	"net/http"
	"sync"
	"time"
)

// NewToken returns a random owner token: 128 bits, URL-safe (22 characters).
func NewToken() string {
	var b [16]byte
	if _, err := crand.Read(b[:]); err != nil {
		panic("lockservice: no randomness for a token: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

var jitterRand = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(seed()))}

func seed() int64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:]))
}

// jitter returns d scaled by a random factor in [lo, hi).
func jitter(d time.Duration, lo, hi float64) time.Duration {
	jitterRand.Lock()
	f := lo + (hi-lo)*jitterRand.Float64()
	jitterRand.Unlock()
	return time.Duration(float64(d) * f)
}

// acquire is one logical acquire: one token, retried after a transport error, 503 or 429 (after
// Retry-After, jittered) while the retry fits in Wait plus the retry budget; each retry asks for
// the wait that is left. A 409 is never retried (with a wait, the service already waited).
// It returns the grant and when the request that got it was sent (the validity's anchor).
func (c *Client) acquire(ctx context.Context, key string, o *AcquireOptions) (*Grant, time.Time, error) {
	if err := validAcquire(key, o); err != nil {
		return nil, time.Time{}, err
	}
	token, ours := o.Token, o.Token == ""
	if ours {
		token = NewToken()
	}
	g := new(Grant)
	path := holdPath(o.kind(), key)
	sent, created, err := c.grantLoop(ctx, o.Wait, path, ours && !o.Reentrant, token, !o.Reentrant, func(wait time.Duration) request {
		body := acquireBody{TTLMs: millis(o.TTL), WaitMs: millis(wait), Token: token, Reentrant: o.Reentrant, Owner: o.Owner,
			Session: o.Session, Limit: o.Limit, Permits: o.Permits, LockDelay: millis(o.LockDelay)}
		return request{method: http.MethodPost, path: path, body: body}
	}, g)
	if err != nil {
		return nil, sent, err
	}
	g.Created = created
	return g, sent, nil
}

// grantLoop sends the request a wait makes (the wait left of totalWait) until it is answered, or
// the retry rules above say stop; it decodes the answer into out and returns the successful
// request's send time and whether it answered 201. releasePath: where an abandoned grant of a
// token the library chose (ours) is released. idempotent: whether a request that got no answer may
// be sent again (not a reentrant acquire: it would add a hold; a 503 or 429 granted nothing).
func (c *Client) grantLoop(ctx context.Context, totalWait time.Duration, releasePath string, ours bool, token string, idempotent bool,
	build func(wait time.Duration) request, out any) (time.Time, bool, error) {
	waitEnd := time.Now().Add(totalWait)
	budgetEnd := waitEnd.Add(c.retryBudget)
	for attempt := 0; ; attempt++ {
		sent := time.Now()
		var wait time.Duration
		if totalWait > 0 {
			if wait = waitEnd.Sub(sent); wait < 0 {
				wait = 0
			}
		}
		r := build(wait)
		r.timeout = c.timeout + wait
		resp, err := c.call(ctx, r, out)
		if err == nil {
			return sent, resp.status == http.StatusCreated, nil
		}
		if ctx.Err() != nil {
			c.abandon(ours, releasePath, token)
			return sent, false, err
		}
		delay, again := retryDelay(err, attempt)
		if !again || time.Now().Add(delay).After(budgetEnd) || !idempotent && IsUnreachable(err) {
			return sent, false, err
		}
		if err := sleep(ctx, delay); err != nil {
			c.abandon(ours, releasePath, token)
			return sent, false, err
		}
	}
}

// retryDelay says whether an acquire may be sent again after err, and after how long.
func retryDelay(err error, attempt int) (time.Duration, bool) {
	var te *TransportError
	if errors.As(err, &te) {
		return backoff(attempt), true
	}
	e, ok := ServiceError(err)
	if !ok || (e.Status != http.StatusServiceUnavailable && e.Status != http.StatusTooManyRequests) {
		return 0, false
	}
	if e.RetryAfter > 0 {
		return jitter(e.RetryAfter, 1, 1.2), true
	}
	return backoff(attempt), true
}

func backoff(attempt int) time.Duration {
	d := 50 * time.Millisecond << uint(attempt)
	if attempt > 5 || d > time.Second {
		d = time.Second
	}
	return jitter(d, 0.8, 1.2)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// abandon releases what an acquire given up by its caller may have been granted unseen (the
// request may have reached the service), bounded, so that it does not linger for its TTL. Only a
// token the library chose: a caller's own token may hold this lock from before.
func (c *Client) abandon(ours bool, path, token string) {
	if !ours {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _ = c.send(ctx, request{method: http.MethodDelete, path: path, token: token})
}
