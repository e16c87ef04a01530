package lockservice

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// goneError: a renewal learned that the lease no longer exists or is not ours: never renew again.
type goneError struct {
	reason LossReason
	detail string
}

func (e *goneError) Error() string { return string(e.reason) + ": " + e.detail }

// keeper keeps one lease (a hold, or a session) alive: it renews every ttl/3 (±10 %) on its own
// goroutine, anchors the local validity deadline at each renewal's send time, watches the lease
// for a loss the service announces, and signals loss at most once.
type keeper struct {
	c      *Client
	ttl    time.Duration
	margin time.Duration
	// maxHoldAt: when the watchdog stops renewing (zero: never).
	maxHoldAt time.Time
	renew     func(ctx context.Context) (time.Duration, error)
	// watchPath and watchToken: the watch route (empty: no watch).
	watchPath, watchToken string
	lostError             func(reason LossReason, detail string) *LockLostError

	started bool // kept (a watchdog runs): only then is a passed deadline a loss

	mu       sync.Mutex
	deadline time.Time
	err      *LockLostError
	halted   bool
	renewals []time.Time     // send times of successful renewals (tests read them)
	delays   []time.Duration // the jittered delay chosen after each (tests read them)

	lost       chan struct{}
	haltCtx    context.Context
	haltCancel context.CancelFunc
	wg         sync.WaitGroup
}

func newKeeper(c *Client, ttl, margin time.Duration, sent time.Time, validity time.Duration) *keeper {
	if margin <= 0 {
		margin = ttl / 10
		if margin < 50*time.Millisecond {
			margin = 50 * time.Millisecond
		}
	}
	k := &keeper{c: c, ttl: ttl, margin: margin, deadline: sent.Add(validity), lost: make(chan struct{})}
	k.haltCtx, k.haltCancel = context.WithCancel(context.Background())
	return k
}

func (k *keeper) start() {
	k.started = true
	k.wg.Add(1)
	go k.watchdog()
	if k.watchPath != "" {
		k.wg.Add(1)
		go k.watch()
	}
}

// halt stops renewing and watching (the lease is being released, or was lost) and waits for both.
func (k *keeper) halt() {
	k.mu.Lock()
	k.halted = true
	k.mu.Unlock()
	k.haltCancel()
	k.wg.Wait()
}

// lose signals the loss once (not after halt: a release of our own is no loss).
func (k *keeper) lose(reason LossReason, detail string) {
	k.mu.Lock()
	if k.halted || k.err != nil {
		k.mu.Unlock()
		return
	}
	k.err = k.lostError(reason, detail)
	k.mu.Unlock()
	close(k.lost)
	k.haltCancel()
}

func (k *keeper) lostErr() *LockLostError {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

func (k *keeper) getDeadline() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.deadline
}

// anchor moves the deadline to a renewal's send time + its validity: the latest answer is the
// truth, even when it is shorter (a renewal may set a shorter lease than the grant had).
func (k *keeper) anchor(sent time.Time, validity time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.deadline = sent.Add(validity)
	k.renewals = append(k.renewals, sent)
}

// renewNow renews once, re-anchoring on success; a goneError loses the lease.
func (k *keeper) renewNow(ctx context.Context) error {
	sent := time.Now()
	validity, err := k.renew(ctx)
	if err == nil {
		k.anchor(sent, validity)
		return nil
	}
	var gone *goneError
	if errors.As(err, &gone) {
		k.lose(gone.reason, gone.detail)
		return k.lostErr()
	}
	return err
}

func (k *keeper) watchdog() {
	defer k.wg.Done()
	var maxHold <-chan time.Time
	if !k.maxHoldAt.IsZero() {
		t := time.NewTimer(time.Until(k.maxHoldAt))
		defer t.Stop()
		maxHold = t.C
	}
	// The first renewal is due a third of the TTL after the anchor (the acquire's send time).
	next := k.getDeadline().Add(-k.ttl).Add(jitter(k.ttl/3, 0.9, 1.1))
	problem := "no renewal was tried"
	for {
		lossAt := k.getDeadline().Add(-k.margin)
		renewT, lossT := time.NewTimer(time.Until(next)), time.NewTimer(time.Until(lossAt))
		select {
		case <-k.haltCtx.Done():
		case <-maxHold:
			k.lose(LostMaxHold, "MaxHold reached: the watchdog stopped renewing")
		case <-lossT.C:
			k.lose(LostValidityExhausted, "renewals failed until the safety margin before the validity deadline: "+problem)
		case <-renewT.C:
		}
		renewT.Stop()
		lossT.Stop()
		if k.haltCtx.Err() != nil {
			return
		}
		ctx, cancel := context.WithDeadline(k.haltCtx, lossAt)
		err := k.renewNow(ctx)
		cancel()
		if err == nil {
			delay := jitter(k.ttl/3, 0.9, 1.1)
			k.mu.Lock()
			k.delays = append(k.delays, delay)
			k.mu.Unlock()
			next = time.Now().Add(delay)
			continue
		}
		if k.haltCtx.Err() != nil {
			return
		}
		problem = err.Error()
		left := time.Until(lossAt)
		delay := left / 4
		if e, ok := ServiceError(err); ok && e.RetryAfter > 0 && e.RetryAfter < delay {
			delay = e.RetryAfter
		}
		if delay > time.Second {
			delay = time.Second
		} else if delay < 25*time.Millisecond {
			delay = 25 * time.Millisecond
		}
		next = time.Now().Add(delay)
	}
}

// watch long-polls the lease's watch route until the service says it is gone.
func (k *keeper) watch() {
	defer k.wg.Done()
	for k.haltCtx.Err() == nil {
		ev, err := k.c.watch(k.haltCtx, k.watchPath, k.watchToken, 0) // the service's default wait, within its MAX_WATCH_MS
		if k.haltCtx.Err() != nil {
			return
		}
		if err == nil {
			if !ev.Held {
				k.lose(ev.Reason, "the service's watch: "+string(ev.Reason)+" at "+ev.At.Format(time.RFC3339Nano))
				return
			}
			continue
		}
		if e, ok := ServiceError(err); ok {
			switch {
			case e.Code == CodeLockNotFound || e.Code == CodeNotOwner:
				k.lose(LostNotHeld, "the service's watch: "+e.Message)
				return
			case e.Code == CodeSessionNotFound:
				k.lose(LostSessionLost, "the service's watch: "+e.Message)
				return
			case e.Status != http.StatusServiceUnavailable:
				return // no watch (too many watchers, a service without watches): the renewals find out
			}
		}
		if sleep(k.haltCtx, jitter(time.Second, 0.5, 1)) != nil {
			return
		}
	}
}
