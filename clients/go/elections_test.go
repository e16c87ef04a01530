package lockservice

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWhileLeaderKeepsLeadershipAndHandsOver(t *testing.T) {
	outer, c, name := ctxFor(t, 20*time.Second), admin(t), uniqueKey(t, "E")
	ctx := outer
	var termA int64
	second := make(chan error, 1)
	var termB int64
	var resignedA time.Time
	var electedB time.Time
	err := c.WhileLeader(ctx, name, CampaignOptions{Candidate: "node-a", Value: "http://a", TTL: time.Second},
		func(ctx context.Context, l *Leadership) error {
			termA = l.Term
			go func() {
				second <- c.WhileLeader(outer, name, CampaignOptions{Candidate: "node-b", TTL: time.Second},
					func(ctx context.Context, l *Leadership) error {
						electedB, termB = time.Now(), l.Term
						return nil
					})
			}()
			time.Sleep(3500 * time.Millisecond) // 3.5 TTLs: the watchdog renews
			info, err := c.InspectElection(ctx, name)
			must(t, err)
			if ctx.Err() != nil || info.Leader == nil || info.Leader.Term != l.Term || info.Leader.Candidate != "node-a" ||
				info.Leader.Value != "http://a" || info.Candidates != 1 || l.Fence != l.Term {
				t.Fatalf("while leader: %+v (ctx %v)", info, ctx.Err())
			}
			resignedA = time.Now()
			return nil
		})
	must(t, err)
	select {
	case err := <-second:
		must(t, err)
	case <-time.After(3 * time.Second):
		t.Fatal("node-b was not elected after node-a resigned")
	}
	if termB <= termA || electedB.Sub(resignedA) > time.Second {
		t.Fatalf("term %d after %d, elected %v after the resignation", termB, termA, electedB.Sub(resignedA))
	}
}

func TestWhileLeaderLosesLeadershipLoudly(t *testing.T) {
	ctx, c, name := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "E")
	err := c.WhileLeader(ctx, name, CampaignOptions{Candidate: "node-a", TTL: 10 * time.Second},
		func(ctx context.Context, l *Leadership) error {
			time.Sleep(200 * time.Millisecond)
			must(t, c.ForceResign(context.Background(), name))
			forced := time.Now()
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
				t.Fatal("no loss signal within 2 s of a forced resignation")
			}
			if d := time.Since(forced); d > 200*time.Millisecond || LossReasonOf(ctx) != LostForceReleased {
				t.Fatalf("signalled %v after, reason %q", d, LossReasonOf(ctx))
			}
			return nil
		})
	var lost *LockLostError
	if !errors.As(err, &lost) || lost.Kind != KindLeader || lost.Reason != LostForceReleased {
		t.Fatalf("WhileLeader: %v", err)
	}
}

func TestObserveElectionTellsEveryChange(t *testing.T) {
	ctx, c, name := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "E")
	events := make(chan ElectionEvent, 16)
	done := errors.New("seen enough")
	observed := make(chan error, 1)
	go func() {
		observed <- c.ObserveElection(ctx, name, func(ev ElectionEvent) error {
			events <- ev
			if ev.Type == "vacant" && ev.Reason == "resigned" {
				return done
			}
			return nil
		})
	}()
	next := func(want string) ElectionEvent {
		t.Helper()
		select {
		case ev := <-events:
			if ev.Type != want {
				t.Fatalf("event %+v, want %s", ev, want)
			}
			return ev
		case <-time.After(3 * time.Second):
			t.Fatalf("no %s event", want)
		}
		return ElectionEvent{}
	}
	next("vacant") // the state first: nobody leads
	l, err := c.Campaign(ctx, name, CampaignOptions{Candidate: "node-a", Value: "v1"})
	must(t, err)
	if ev := next("elected"); ev.Term != l.Term || ev.Candidate != "node-a" || ev.Value != "v1" || ev.Revision != 1 {
		t.Fatalf("elected %+v", ev)
	}
	p, err := l.Proclaim(ctx, "v2")
	must(t, err)
	if ev := next("proclaimed"); ev.Value != "v2" || ev.Revision != p.Revision || p.Revision != 2 {
		t.Fatalf("proclaimed %+v (%+v)", ev, p)
	}
	must(t, l.Resign(ctx))
	if ev := next("vacant"); ev.Term != l.Term || ev.Reason != "resigned" {
		t.Fatalf("vacant %+v", ev)
	}
	if err := <-observed; err != done {
		t.Fatalf("ObserveElection returned %v, not the callback's error", err)
	}
}

func TestObserveLongPollAndCampaignErrors(t *testing.T) {
	ctx, c, name := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "E")
	l, err := c.Campaign(ctx, name, CampaignOptions{Candidate: "node-a", TTL: 5 * time.Second})
	must(t, err)
	defer func() { _ = l.Resign(context.Background()) }()
	now, err := c.Observe(ctx, name, nil, time.Second)
	must(t, err)
	if now.Leader == nil || now.Term != l.Term || now.Revision != 1 {
		t.Fatalf("observe %+v", now)
	}
	same, err := c.Observe(ctx, name, now, 300*time.Millisecond)
	must(t, err)
	if same.Changed {
		t.Fatalf("changed without a change: %+v", same)
	}
	_, err = c.CampaignElected(ctx, name, CampaignOptions{Candidate: "node-b"})
	if e, ok := ServiceError(err); !IsLockHeld(err) || !ok || !contains(e.Owners, "node-a") {
		t.Fatalf("a second candidate: %v", err)
	}
	_, err = c.Campaign(ctx, name, CampaignOptions{Candidate: "node-b", Wait: 300 * time.Millisecond})
	if !IsLockHeld(err) {
		t.Fatalf("campaigning 300 ms: %v", err)
	}
	if _, err := c.CampaignElected(ctx, name, CampaignOptions{}); !IsInvalidArgument(err) {
		t.Fatalf("no candidate: %v", err)
	}
	r, err := c.RenewLeadership(ctx, name, l.Token, 0)
	must(t, err)
	if r.Fence != l.Term || r.ValidityMs <= 0 {
		t.Fatalf("renew %+v", r)
	}
}

func TestWhileLeaderBoundToASession(t *testing.T) {
	ctx, c, name := ctxFor(t, 10*time.Second), admin(t), uniqueKey(t, "E")
	s, err := c.OpenSession(ctx, SessionOptions{TTL: 600 * time.Millisecond})
	must(t, err)
	err = c.WhileLeader(ctx, name, CampaignOptions{Candidate: "node-a", Session: s.ID}, func(ctx context.Context, l *Leadership) error {
		time.Sleep(1500 * time.Millisecond) // the session's keepalives keep the leadership
		info, err := c.InspectElection(ctx, name)
		if err != nil || info.Leader == nil || info.Leader.Term != l.Term {
			t.Fatalf("after 1.5 s: %+v %v", info, err)
		}
		_, err = c.CloseSession(context.Background(), s.ID)
		must(t, err)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("no loss signal after the session was closed")
		}
		return nil
	})
	var lost *LockLostError
	if !errors.As(err, &lost) || lost.Reason != LostSessionLost {
		t.Fatalf("WhileLeader: %v", err)
	}
}

func TestCheckFenceOfEveryKind(t *testing.T) {
	ctx, c, k := ctxFor(t, 15*time.Second), admin(t), uniqueKey(t, "F")
	read, err := c.AcquireGrant(ctx, k, AcquireOptions{Kind: KindRead, TTL: 10 * time.Second})
	must(t, err)
	permit, err := c.AcquireGrant(ctx, k, AcquireOptions{Kind: KindPermit, Limit: 2, Permits: 1, TTL: 10 * time.Second})
	must(t, err)
	current := func(kind Kind, fence int64) *FenceCheck {
		t.Helper()
		got, err := c.CheckFence(ctx, kind, k, fence)
		must(t, err)
		return got
	}
	if !current(KindRead, read.Fence).Current || !current(KindWrite, read.Fence).Current {
		t.Fatal("the read hold's fence is not current on the rwlock")
	}
	if !current(KindPermit, permit.Fence).Current {
		t.Fatal("the permit's fence is not current on the semaphore")
	}
	if current(KindLock, read.Fence).Held {
		t.Fatal("the lock of the same key is free")
	}
	l, err := c.Campaign(ctx, k, CampaignOptions{Candidate: "node-a", TTL: 10 * time.Second})
	must(t, err)
	if !current(KindLeader, l.Term).Current {
		t.Fatal("the leader's term is not current")
	}
	must(t, l.Resign(ctx))
	if gone := current(KindLeader, l.Term); gone.Current || gone.Held || gone.Fence != nil {
		t.Fatalf("after the resignation: %+v", gone)
	}
	var ia *InvalidArgumentError
	if _, err := c.CheckFence(ctx, KindLeader, k, 0); !errors.As(err, &ia) || ia.Argument != "term" {
		t.Fatalf("term 0: %v", err)
	}
	if _, err := c.CheckFence(ctx, Kind("lock"), k, 1); !errors.As(err, &ia) || ia.Argument != "kind" {
		t.Fatalf("an unknown kind: %v", err)
	}
}
