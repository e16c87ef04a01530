package lockservice

import "time"

// Kind is the kind of a hold: an exclusive lock, a read or write hold of a read-write lock, or
// permits of a semaphore. Its value is the service's mode word.
type Kind string

// The kinds of hold.
const (
	KindLock   Kind = "exclusive"
	KindRead   Kind = "read"
	KindWrite  Kind = "write"
	KindPermit Kind = "permit"
	// KindLeader: an election's leadership (Campaign, WhileLeader); its fence is the term.
	KindLeader Kind = "leader"
)

// Grant is the answer to an acquire or a renew.
type Grant struct {
	Key   string `json:"key"`
	Mode  Kind   `json:"mode"`
	Token string `json:"token"`
	// Fence strictly increases per key: pass it to the resource you protect.
	Fence      int64     `json:"fence"`
	TTLMs      int64     `json:"ttlMs"`
	ValidityMs int64     `json:"validityMs"`
	ExpiresAt  time.Time `json:"expiresAt"`
	HoldCount  int       `json:"holdCount"`
	// Permits and Limit: semaphores only (0 otherwise).
	Permits int `json:"permits,omitempty"`
	Limit   int `json:"limit,omitempty"`
	// Created: 201 (a new hold) rather than 200 (a re-acquire by the same token).
	Created bool `json:"-"`
}

// TTL is the grant's lease length.
func (g *Grant) TTL() time.Duration { return ms(g.TTLMs) }

// Validity is how long after sending the request the holder may act.
func (g *Grant) Validity() time.Duration { return ms(g.ValidityMs) }

// Released is the answer to a release.
type Released struct {
	Key       string `json:"key"`
	Released  bool   `json:"released"`
	HoldCount int    `json:"holdCount"`
}

// LockInfo is an exclusive lock as inspect and the listing show it.
type LockInfo struct {
	Key         string `json:"key"`
	Mode        Kind   `json:"mode"`
	Fence       int64  `json:"fence"`
	RemainingMs int64  `json:"remainingMs"`
	HoldCount   int    `json:"holdCount"`
	Waiters     int    `json:"waiters"`
	Owner       string `json:"owner,omitempty"`
}

// WriterInfo is the writer of a read-write lock.
type WriterInfo struct {
	Fence       int64  `json:"fence"`
	RemainingMs int64  `json:"remainingMs"`
	Owner       string `json:"owner,omitempty"`
}

// ReaderHold is one read hold (admin view).
type ReaderHold struct {
	Fence       int64  `json:"fence"`
	RemainingMs int64  `json:"remainingMs"`
	HoldCount   int    `json:"holdCount"`
	Owner       string `json:"owner,omitempty"`
}

// RWLockInfo is a read-write lock as inspect and the listing show it.
type RWLockInfo struct {
	Key           string       `json:"key"`
	Writer        *WriterInfo  `json:"writer"`
	Readers       int          `json:"readers"`
	ReaderHolds   []ReaderHold `json:"readerHolds,omitempty"`
	WriterWaiting bool         `json:"writerWaiting"`
	Waiters       int          `json:"waiters"`
	Owners        []string     `json:"owners,omitempty"`
}

// PermitHold is one hold of a semaphore (admin view).
type PermitHold struct {
	Fence       int64  `json:"fence"`
	Permits     int    `json:"permits"`
	RemainingMs int64  `json:"remainingMs"`
	HoldCount   int    `json:"holdCount"`
	Owner       string `json:"owner,omitempty"`
}

// SemaphoreInfo is a semaphore as inspect and the listing show it.
type SemaphoreInfo struct {
	Key          string       `json:"key"`
	Limit        int          `json:"limit"`
	PermitsInUse int          `json:"permitsInUse"`
	Holders      int          `json:"holders"`
	Waiters      int          `json:"waiters"`
	Owners       []string     `json:"owners,omitempty"`
	Holds        []PermitHold `json:"holds,omitempty"`
}

// LockList, RWLockList, SemaphoreList: one page of an admin listing; Cursor is "" on the last page.
type LockList struct {
	Items  []LockInfo `json:"items"`
	Cursor string     `json:"cursor"`
}

// RWLockList is one page of GET /rwlocks.
type RWLockList struct {
	Items  []RWLockInfo `json:"items"`
	Cursor string       `json:"cursor"`
}

// SemaphoreList is one page of GET /semaphores.
type SemaphoreList struct {
	Items  []SemaphoreInfo `json:"items"`
	Cursor string          `json:"cursor"`
}

// ListOptions: an admin listing's prefix, page size and cursor (all optional).
type ListOptions struct {
	Prefix string
	Limit  int
	Cursor string
}

// Session is an open session: ID is a secret, like a token.
type Session struct {
	ID        string    `json:"id"`
	TTLMs     int64     `json:"ttlMs"`
	ExpiresAt time.Time `json:"expiresAt"`
	Owner     string    `json:"owner,omitempty"`
	// LockDelayMs: the lock-delay of its holds that give none of their own (0: none).
	LockDelayMs int64 `json:"lockDelayMs"`
}

// SessionHold is a hold bound to a session.
type SessionHold struct {
	Key         string `json:"key"`
	Kind        Kind   `json:"kind"`
	Fence       int64  `json:"fence"`
	RemainingMs int64  `json:"remainingMs"`
}

// SessionRef names a hold a session lost (keepalive) or released (close).
type SessionRef struct {
	Key      string `json:"key"`
	Kind     Kind   `json:"kind"`
	Released bool   `json:"released,omitempty"`
}

// Keepalive is the answer to a session keepalive: the holds it renewed and those it no longer has.
type Keepalive struct {
	TTLMs      int64         `json:"ttlMs"`
	ExpiresAt  time.Time     `json:"expiresAt"`
	ValidityMs int64         `json:"validityMs"`
	Holds      []SessionHold `json:"holds"`
	Lost       []SessionRef  `json:"lost"`
}

// SessionInfo is a session as inspect shows it.
type SessionInfo struct {
	TTLMs       int64         `json:"ttlMs"`
	ExpiresAt   time.Time     `json:"expiresAt"`
	RemainingMs int64         `json:"remainingMs"`
	Owner       string        `json:"owner,omitempty"`
	Holds       []SessionHold `json:"holds"`
}

// SessionClosed is the answer to closing a session: each hold it released.
type SessionClosed struct {
	Closed bool         `json:"closed"`
	Holds  []SessionRef `json:"holds"`
}

// WatchEvent is what a watch says: held (with the remaining lease) or lost (why, when).
type WatchEvent struct {
	Held        bool       `json:"held"`
	RemainingMs int64      `json:"remainingMs,omitempty"`
	Reason      LossReason `json:"reason,omitempty"`
	At          time.Time  `json:"at,omitempty"`
}

// Health is GET /healthz.
type Health struct {
	Status string `json:"status"`
}

// Readiness is GET /readyz (also when it answers 503: Ready is then false).
type Readiness struct {
	Ready    bool        `json:"ready"`
	Majority int         `json:"majority"`
	Nodes    []NodeState `json:"nodes"`
}

// NodeState is one Redis node as /readyz and a backend_unavailable error describe it.
type NodeState struct {
	Index        int        `json:"index"`
	Address      string     `json:"address"`
	Up           bool       `json:"up"`
	LatencyMs    *float64   `json:"latencyMs"`
	Vote         string     `json:"vote"`
	QuarantineMs float64    `json:"quarantineMs"`
	RestartedAt  *time.Time `json:"restartedAt"`
	Clock        struct {
		State       string   `json:"state"`
		Rate        *float64 `json:"rate"`
		TrustedInMs float64  `json:"trustedInMs"`
	} `json:"clock"`
	LastError *struct {
		Reason  string    `json:"reason"`
		Message string    `json:"message"`
		At      time.Time `json:"at"`
	} `json:"lastError"`
	Answered bool `json:"answered,omitempty"`
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
