package lockservice

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// AcquireOptions: what to acquire and how. Only Kind (default KindLock) and, for a semaphore,
// Limit and Permits matter for what is held; the rest are optional.
type AcquireOptions struct {
	Kind Kind
	// TTL: the lease (≥ 100 ms; 0: the service's default, or the session's TTL when bound).
	TTL time.Duration
	// Wait: how long to wait in line when it is held (0: try once; a 409 is then never retried).
	Wait time.Duration
	// Token: the owner token (16–128 of A-Z a-z 0-9 _ -); by default a random one per acquire.
	Token string
	// Owner: a label shown by inspect, listings and a 409 (not a secret).
	Owner string
	// Reentrant: a re-acquire by the same token adds a hold instead of re-granting.
	Reentrant bool
	// LockDelay: when this hold ends without its holder's release (expiry, force-release, its
	// session lapsing), nobody gets it for this long (at most MAX_LOCK_DELAY_MS). 0: not sent
	// (no delay, or a bound session's own).
	LockDelay time.Duration
	// Session binds the hold to a session (its lease is the session's).
	Session string
	// Limit and Permits: a semaphore's limit (≥ 1) and the permits this hold takes (1 … Limit;
	// required, so a forgotten count is refused rather than guessed).
	Limit   int
	Permits int

	// MaxHold (holds only): the watchdog stops renewing this long after the acquire was sent, and
	// the hold is lost with LostMaxHold. 0: no cap.
	MaxHold time.Duration
	// ReleaseTimeout (holds only): bound on the release when WithLock returns (default 2 s).
	ReleaseTimeout time.Duration
	// SafetyMargin (holds only): the hold counts as lost this long before its local validity
	// deadline when renewals keep failing (default max(50 ms, ttl/10)).
	SafetyMargin time.Duration
	// OnReleaseError (holds only) is called when releasing on WithLock's exit failed although
	// the block succeeded (WithLock then still returns nil: the hold lapses within its TTL).
	OnReleaseError func(key string, err error)
	// Manual (Acquire only): no watchdog and no watch; the caller renews with Hold.Renew.
	Manual bool
	// NoWatch (holds only): no background watch, which parks one request on the service per hold;
	// a loss is then found by the next renewal (within ttl/3) instead of at once.
	NoWatch bool
}

func (o *AcquireOptions) kind() Kind {
	if o.Kind == "" {
		return KindLock
	}
	return o.Kind
}

// holdPath is the route of a kind of hold on key: POST acquires, PUT …/renew renews, DELETE
// releases, GET …/watch watches.
func holdPath(kind Kind, key string) string {
	k := url.PathEscape(key)
	switch kind {
	case KindRead:
		return "/rwlocks/" + k + "/read"
	case KindWrite:
		return "/rwlocks/" + k + "/write"
	case KindPermit:
		return "/semaphores/" + k
	case KindLeader:
		return "/elections/" + k
	default:
		return "/locks/" + k
	}
}

type acquireBody struct {
	TTLMs     int64  `json:"ttlMs,omitempty"`
	WaitMs    int64  `json:"waitMs,omitempty"`
	Token     string `json:"token"`
	Reentrant bool   `json:"reentrant,omitempty"`
	Owner     string `json:"owner,omitempty"`
	Session   string `json:"session,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	Permits   int    `json:"permits,omitempty"`
	LockDelay int64  `json:"lockDelayMs,omitempty"`
}

// AcquireGrant acquires once (one logical acquire: retried safely with the same token after a
// transport error, 503 or 429, within Wait plus the client's retry budget) and returns the grant.
// Nothing renews it: see Acquire and WithLock for a hold that is kept alive.
func (c *Client) AcquireGrant(ctx context.Context, key string, o AcquireOptions) (*Grant, error) {
	g, _, err := c.acquire(ctx, key, &o)
	return g, err
}

// Renew extends a hold (ttl 0: its latest TTL) and returns the new grant (same fence).
func (c *Client) Renew(ctx context.Context, kind Kind, key, token string, ttl time.Duration) (*Grant, error) {
	if err := validHold(kind, key, token); err != nil {
		return nil, err
	}
	if err := validTTL("ttl", ttl); err != nil {
		return nil, err
	}
	body := map[string]any{}
	if ttl > 0 {
		body["ttlMs"] = millis(ttl)
	}
	g := new(Grant)
	_, err := c.call(ctx, request{method: http.MethodPut, path: holdPath(kind, key) + "/renew", token: token, body: body}, g)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Release drops one hold of token (the lock is free when its hold count reaches 0).
func (c *Client) Release(ctx context.Context, kind Kind, key, token string) (*Released, error) {
	if err := validHold(kind, key, token); err != nil {
		return nil, err
	}
	r := new(Released)
	if _, err := c.call(ctx, request{method: http.MethodDelete, path: holdPath(kind, key), token: token}, r); err != nil {
		return nil, err
	}
	return r, nil
}

// Watch waits (a long poll, up to wait; 0: the service's default of 30 s) until the hold is gone
// or the wait runs out: {Held: false, Reason, At} or {Held: true, RemainingMs}.
func (c *Client) Watch(ctx context.Context, kind Kind, key, token string, wait time.Duration) (*WatchEvent, error) {
	if err := validHold(kind, key, token); err != nil {
		return nil, err
	}
	return c.watch(ctx, holdPath(kind, key)+"/watch", token, wait)
}

func (c *Client) watch(ctx context.Context, path, token string, wait time.Duration) (*WatchEvent, error) {
	if wait < 0 {
		return nil, invalid("wait", "must not be negative")
	}
	q := url.Values{}
	if wait > 0 {
		q.Set("wait", strconv.FormatInt(millis(wait), 10))
	}
	ev := new(WatchEvent)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: path, query: q, token: token, timeout: c.timeout + watchWaitOf(wait)}, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// serviceWatchWait is the wait of a watch that names none (the service's default, at most).
const serviceWatchWait = 30 * time.Second

func watchWaitOf(wait time.Duration) time.Duration {
	if wait == 0 {
		return serviceWatchWait
	}
	return wait
}

func validHold(kind Kind, key, token string) error {
	switch kind {
	case KindLock, KindRead, KindWrite, KindPermit:
	default:
		return invalid("kind", "must be KindLock, KindRead, KindWrite or KindPermit")
	}
	if err := validKey(key); err != nil {
		return err
	}
	return validToken(token)
}

// InspectLock: the lock's holder (never its token); a free lock is the lock_not_found error.
func (c *Client) InspectLock(ctx context.Context, key string) (*LockInfo, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	out := new(LockInfo)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/locks/" + url.PathEscape(key)}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// InspectRWLock: the writer and readers; readerHolds (admin) lists every read hold.
func (c *Client) InspectRWLock(ctx context.Context, key string, readerHolds bool) (*RWLockInfo, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	q := url.Values{}
	if readerHolds {
		q.Set("readers", "true")
	}
	out := new(RWLockInfo)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/rwlocks/" + url.PathEscape(key), query: q}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// InspectSemaphore: limit, permits in use, holders; holds (admin) lists every hold.
func (c *Client) InspectSemaphore(ctx context.Context, key string, holds bool) (*SemaphoreInfo, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	q := url.Values{}
	if holds {
		q.Set("holds", "true")
	}
	out := new(SemaphoreInfo)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/semaphores/" + url.PathEscape(key), query: q}, out); err != nil {
		return nil, err
	}
	return out, nil
}

func listQuery(o ListOptions) url.Values {
	q := url.Values{}
	if o.Prefix != "" {
		q.Set("prefix", o.Prefix)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// ListLocks (admin): one page of held locks.
func (c *Client) ListLocks(ctx context.Context, o ListOptions) (*LockList, error) {
	out := new(LockList)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/locks", query: listQuery(o)}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListRWLocks (admin): one page of read-write locks.
func (c *Client) ListRWLocks(ctx context.Context, o ListOptions) (*RWLockList, error) {
	out := new(RWLockList)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/rwlocks", query: listQuery(o)}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListSemaphores (admin): one page of semaphores.
func (c *Client) ListSemaphores(ctx context.Context, o ListOptions) (*SemaphoreList, error) {
	out := new(SemaphoreList)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/semaphores", query: listQuery(o)}, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Client) forceRelease(ctx context.Context, path string, fence int64) (*Released, error) {
	q := url.Values{"force": {"true"}}
	if fence > 0 {
		q.Set("fence", strconv.FormatInt(fence, 10))
	}
	out := new(Released)
	if _, err := c.call(ctx, request{method: http.MethodDelete, path: path, query: q}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ForceReleaseLock (admin) frees a lock whoever holds it; its holder's watch says force_released.
func (c *Client) ForceReleaseLock(ctx context.Context, key string) (*Released, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	return c.forceRelease(ctx, holdPath(KindLock, key), 0)
}

// ForceReleaseWriteHold (admin) drops a read-write lock's writer.
func (c *Client) ForceReleaseWriteHold(ctx context.Context, key string) (*Released, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	return c.forceRelease(ctx, holdPath(KindWrite, key), 0)
}

// ForceReleaseReadHold (admin) drops the read hold with this fence.
func (c *Client) ForceReleaseReadHold(ctx context.Context, key string, fence int64) (*Released, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	if fence < 1 {
		return nil, invalid("fence", "must be a positive fence")
	}
	return c.forceRelease(ctx, holdPath(KindRead, key), fence)
}

// ForceReleasePermit (admin) drops the semaphore hold with this fence.
func (c *Client) ForceReleasePermit(ctx context.Context, key string, fence int64) (*Released, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	if fence < 1 {
		return nil, invalid("fence", "must be a positive fence")
	}
	return c.forceRelease(ctx, holdPath(KindPermit, key), fence)
}

// Health is GET /healthz.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	out := new(Health)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/healthz"}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Readiness is GET /readyz; a 503 (not ready) is answered as Readiness{Ready: false}, not an error.
func (c *Client) Readiness(ctx context.Context) (*Readiness, error) {
	out := new(Readiness)
	resp, err := c.call(ctx, request{method: http.MethodGet, path: "/readyz"}, out)
	if err != nil && resp != nil && resp.status == http.StatusServiceUnavailable {
		if jsonErr := decodeInto(resp.body, out); jsonErr == nil {
			return out, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FenceCheck is a fence check's answer, a snapshot: Current only while a live hold carries exactly
// the fence asked about; Fence is then that fence, else the live hold's (nil when nothing is held);
// Held: anything is held there.
type FenceCheck struct {
	Current bool   `json:"current"`
	Fence   *int64 `json:"fence"`
	Held    bool   `json:"held"`
}

// maxFence is the highest fence the service hands out (2^53 − 1, a JSON number's exact range).
const maxFence = 1<<53 - 1

// CheckFence asks whether fence is a live hold's fence on key right now: KindLock checks the lock,
// KindRead and KindWrite the rwlock (its write hold or any read hold), KindPermit the semaphore (any
// hold), KindLeader the election named key (fence is then its term). Pair the answer with the
// resource's own write window: the hold may end the moment after.
func (c *Client) CheckFence(ctx context.Context, kind Kind, key string, fence int64) (*FenceCheck, error) {
	arg, resource := "fence", ""
	switch kind {
	case KindLock, "":
		resource = "/locks/"
	case KindRead, KindWrite:
		resource = "/rwlocks/"
	case KindPermit:
		resource = "/semaphores/"
	case KindLeader:
		arg, resource = "term", "/elections/"
	default:
		return nil, invalid("kind", "must be one of exclusive, read, write, permit, leader")
	}
	if kind == KindLeader {
		if err := validName(key); err != nil {
			return nil, err
		}
	} else if err := validKey(key); err != nil {
		return nil, err
	}
	if fence < 1 || fence > maxFence {
		return nil, invalid(arg, "must be in 1 … 2^53 − 1, got "+strconv.FormatInt(fence, 10))
	}
	out := new(FenceCheck)
	path := resource + url.PathEscape(key) + "/fence/" + strconv.FormatInt(fence, 10)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: path}, out); err != nil {
		return nil, err
	}
	return out, nil
}
