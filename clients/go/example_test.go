package lockservice_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	lockservice "github.com/lock-service/lock-service/clients/go"
)

func writeReport(ctx context.Context, fence int64) error { return ctx.Err() }

// The one-call helper (compiled, not run: it needs a service).
func ExampleClient_WithLock() {
	client, err := lockservice.New("http://127.0.0.1:8080", lockservice.Options{APIKey: os.Getenv("LOCK_SERVICE_KEY")})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	err = client.WithLock(ctx, "reports:daily", lockservice.AcquireOptions{TTL: 30 * time.Second, Wait: time.Minute},
		func(ctx context.Context, h *lockservice.Hold) error {
			// ctx is cancelled the moment the hold is lost; lockservice.LossReasonOf(ctx) says why.
			return writeReport(ctx, h.Fence) // hand the fence to what you write to
		})
	var lost *lockservice.LockLostError
	switch {
	case lockservice.IsLockHeld(err):
		fmt.Println("someone else had it for the whole minute")
	case errors.As(err, &lost):
		fmt.Println("lost:", lost.Reason)
	}
}

// A semaphore's permits, held by hand.
func ExampleClient_Acquire() {
	client, _ := lockservice.New("http://127.0.0.1:8080", lockservice.Options{})
	ctx := context.Background()
	h, err := client.Acquire(ctx, "api:quota", lockservice.AcquireOptions{Kind: lockservice.KindPermit, Limit: 4, Permits: 2})
	if err != nil {
		panic(err)
	}
	defer h.Release(context.Background())
	select {
	case <-h.Lost():
		fmt.Println(h.Err())
	case <-time.After(time.Second):
	}
}

func runScheduler(ctx context.Context, term int64) error { return ctx.Err() }

// Leader election (compiled, not run).
func ExampleClient_WhileLeader() {
	client, _ := lockservice.New("http://127.0.0.1:8080", lockservice.Options{})
	ctx := context.Background()
	myURL := "http://10.0.0.1:8080"
	err := client.WhileLeader(ctx, "billing-scheduler", lockservice.CampaignOptions{Candidate: "node-1", Value: myURL, TTL: 15 * time.Second},
		func(ctx context.Context, l *lockservice.Leadership) error {
			return runScheduler(ctx, l.Term) // ctx is cancelled the moment the leadership is lost; the term is the fence
		})
	fmt.Println(err)
	_ = client.ObserveElection(ctx, "billing-scheduler", func(ev lockservice.ElectionEvent) error {
		fmt.Println(ev.Type, ev.Term, ev.Candidate, ev.Value)
		return nil
	})
}
