package lockservice

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// CampaignOptions: who campaigns and how. Candidate is required.
type CampaignOptions struct {
	// Candidate: 1–200 printable characters, shown to everyone (not a secret).
	Candidate string
	// Value: what the leader announces (up to 4096 bytes), e.g. its address; "" for none.
	Value string
	// TTL: the leadership's lease (≥ 100 ms; 0: the service's default, or the session's TTL).
	TTL time.Duration
	// Wait: for CampaignElected, how long one campaign waits in line. For Campaign and
	// WhileLeader, how long to keep campaigning in all (0: until elected or ctx ends).
	Wait    time.Duration
	Session string
	Token   string

	// As in AcquireOptions, for the kept leadership (Campaign and WhileLeader).
	MaxHold        time.Duration
	ReleaseTimeout time.Duration
	SafetyMargin   time.Duration
	OnReleaseError func(name string, err error)
	NoWatch        bool
}

// Elected is the answer to a campaign: the leadership and its term (the fence).
type Elected struct {
	Name       string    `json:"name"`
	Term       int64     `json:"term"`
	Token      string    `json:"token"`
	Candidate  string    `json:"candidate"`
	Value      string    `json:"value"` // "" when none (the service's null)
	Revision   int64     `json:"revision"`
	Since      time.Time `json:"since"`
	TTLMs      int64     `json:"ttlMs"`
	ValidityMs int64     `json:"validityMs"`
	ExpiresAt  time.Time `json:"expiresAt"`
	Created    bool      `json:"-"`
}

// Proclaimed is the answer to a proclaim.
type Proclaimed struct {
	Name     string `json:"name"`
	Term     int64  `json:"term"`
	Revision int64  `json:"revision"`
	Value    string `json:"value"`
}

// LeaderInfo is an election's leader as everyone sees it (never its token).
type LeaderInfo struct {
	Candidate   string    `json:"candidate"`
	Value       string    `json:"value"`
	Term        int64     `json:"term"`
	Revision    int64     `json:"revision"`
	Since       time.Time `json:"since"`
	RemainingMs int64     `json:"remainingMs"`
}

// ElectionInfo is GET /elections/:name (and a listing's item).
type ElectionInfo struct {
	Name        string      `json:"name"`
	Leader      *LeaderInfo `json:"leader"`
	Term        int64       `json:"term"`
	Candidates  int         `json:"candidates"`
	Transitions int64       `json:"transitions"`
}

// ElectionList is one page of GET /elections (admin).
type ElectionList struct {
	Items  []ElectionInfo `json:"items"`
	Cursor string         `json:"cursor"`
}

// Observation is a long-poll observe's answer; pass it back to Observe to be told what changed.
type Observation struct {
	Name     string      `json:"name"`
	Term     int64       `json:"term"`
	Revision int64       `json:"revision"`
	Leader   *LeaderInfo `json:"leader"`
	Reason   string      `json:"reason,omitempty"`
	Changed  bool        `json:"changed"`
}

// ElectionEvent is one event of an observe stream: Type is "elected", "proclaimed", "vacant" or
// "resync" (the stream may have missed something: Leader is the state now).
type ElectionEvent struct {
	Type      string      `json:"-"`
	ID        string      `json:"-"`
	Term      int64       `json:"term"`
	Revision  int64       `json:"revision"`
	Candidate string      `json:"candidate,omitempty"`
	Value     string      `json:"value,omitempty"`
	Since     time.Time   `json:"since,omitempty"`
	Reason    string      `json:"reason,omitempty"`
	Leader    *LeaderInfo `json:"leader,omitempty"`
}

func electionPath(name string) string { return holdPath(KindLeader, name) }

func validCampaign(name string, o *CampaignOptions) error {
	if err := validKey(name); err != nil {
		return &InvalidArgumentError{Argument: "name", Reason: err.(*InvalidArgumentError).Reason}
	}
	if o.Candidate == "" {
		return invalid("candidate", "is required (1–200 printable characters)")
	}
	if err := validOwner(o.Candidate); err != nil {
		return &InvalidArgumentError{Argument: "candidate", Reason: err.(*InvalidArgumentError).Reason}
	}
	if len(o.Value) > 4096 {
		return invalid("value", "must be at most 4096 bytes")
	}
	if o.Token != "" {
		if err := validToken(o.Token); err != nil {
			return err
		}
	}
	if err := validTTL("ttl", o.TTL); err != nil {
		return err
	}
	if o.Wait < 0 || o.MaxHold < 0 {
		return invalid("wait", "must not be negative")
	}
	return validSession(o.Session)
}

// maxCampaignWait is one campaign request's wait when campaigning for longer (MAX_WAIT_MS's default).
const maxCampaignWait = 30 * time.Second

// CampaignElected campaigns once (waiting in line up to o.Wait, retried safely like an acquire)
// and returns the campaign's answer; nothing renews the leadership (see Campaign, WhileLeader).
func (c *Client) CampaignElected(ctx context.Context, name string, o CampaignOptions) (*Elected, error) {
	e, _, err := c.campaign(ctx, name, &o, o.Token)
	return e, err
}

func (c *Client) campaign(ctx context.Context, name string, o *CampaignOptions, token string) (*Elected, time.Time, error) {
	if err := validCampaign(name, o); err != nil {
		return nil, time.Time{}, err
	}
	ours := o.Token == ""
	if token == "" {
		token = NewToken()
	}
	e := new(Elected)
	path := electionPath(name)
	sent, created, err := c.grantLoop(ctx, o.Wait, path, ours, token, true, func(wait time.Duration) request {
		body := map[string]any{"candidate": o.Candidate, "token": token}
		if o.Value != "" {
			body["value"] = o.Value
		}
		if o.TTL > 0 {
			body["ttlMs"] = millis(o.TTL)
		}
		if wait > 0 {
			body["waitMs"] = millis(wait)
		}
		if o.Session != "" {
			body["session"] = o.Session
		}
		return request{method: http.MethodPost, path: path + "/campaign", body: body}
	}, e)
	if err != nil {
		return nil, sent, err
	}
	e.Created = created
	return e, sent, nil
}

// Leadership is a kept leadership: a Hold (Kind KindLeader, Fence = Term) renewed by the watchdog
// and watched like any hold; Lost() is closed when it ends.
type Leadership struct {
	*Hold
	Term      int64
	Candidate string
	Value     string
	Revision  int64
	Since     time.Time
}

// Campaign campaigns until elected (each request waiting in line; o.Wait bounds the whole, 0:
// until ctx ends) and keeps the leadership like Acquire keeps a hold. Resign when done.
func (c *Client) Campaign(ctx context.Context, name string, o CampaignOptions) (*Leadership, error) {
	if err := validCampaign(name, &o); err != nil {
		return nil, err
	}
	token := o.Token
	if token == "" {
		token = NewToken() // one token for every round: a grant seen late is re-granted, not doubled
	}
	var until time.Time
	if o.Wait > 0 {
		until = time.Now().Add(o.Wait)
	}
	for {
		round := o
		round.Token = token
		round.Wait = maxCampaignWait
		if !until.IsZero() {
			if round.Wait = time.Until(until); round.Wait > maxCampaignWait {
				round.Wait = maxCampaignWait
			}
		}
		e, sent, err := c.campaign(ctx, name, &round, token)
		if err == nil {
			return c.keepLeadership(ctx, name, e, sent, o)
		}
		if !IsLockHeld(err) || ctx.Err() != nil || (!until.IsZero() && time.Now().After(until)) {
			if o.Token == "" && ctx.Err() != nil {
				c.abandon(true, electionPath(name), token)
			}
			return nil, err
		}
	}
}

func (c *Client) keepLeadership(ctx context.Context, name string, e *Elected, sent time.Time, o CampaignOptions) (*Leadership, error) {
	g := &Grant{Key: name, Mode: KindLeader, Token: e.Token, Fence: e.Term, TTLMs: e.TTLMs, ValidityMs: e.ValidityMs,
		ExpiresAt: e.ExpiresAt, HoldCount: 1, Created: e.Created}
	ao := AcquireOptions{Kind: KindLeader, TTL: o.TTL, Session: o.Session, MaxHold: o.MaxHold, ReleaseTimeout: o.ReleaseTimeout,
		SafetyMargin: o.SafetyMargin, OnReleaseError: o.OnReleaseError, NoWatch: o.NoWatch}
	h, err := c.keep(ctx, name, KindLeader, g, sent, ao)
	if err != nil {
		return nil, err
	}
	return &Leadership{Hold: h, Term: e.Term, Candidate: e.Candidate, Value: e.Value, Revision: e.Revision, Since: e.Since}, nil
}

// Proclaim announces a new value as the leader.
func (l *Leadership) Proclaim(ctx context.Context, value string) (*Proclaimed, error) {
	return l.c.Proclaim(ctx, l.Key, l.Token, value)
}

// Resign ends the term (the next candidate in line is elected at once); Release does the same.
func (l *Leadership) Resign(ctx context.Context) error { return l.Release(ctx) }

// WhileLeader campaigns (as Campaign), runs fn while leader with a ctx cancelled the moment the
// leadership is lost, and resigns when fn returns. What it returns: as WithLock.
func (c *Client) WhileLeader(ctx context.Context, name string, o CampaignOptions, fn func(ctx context.Context, l *Leadership) error) (err error) {
	l, err := c.Campaign(ctx, name, o)
	if err != nil {
		return err
	}
	return c.runHeld(ctx, l.Hold, o.OnReleaseError, func(ctx context.Context) error { return fn(ctx, l) })
}

// Proclaim announces value as the leader holding token.
func (c *Client) Proclaim(ctx context.Context, name, token, value string) (*Proclaimed, error) {
	if err := validLeader(name, token); err != nil {
		return nil, err
	}
	if len(value) > 4096 {
		return nil, invalid("value", "must be at most 4096 bytes")
	}
	out := new(Proclaimed)
	if _, err := c.call(ctx, request{method: http.MethodPut, path: electionPath(name) + "/proclaim", token: token, body: map[string]any{"value": value}}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// RenewLeadership extends the leadership (ttl 0: its latest TTL); Grant.Fence is the term.
func (c *Client) RenewLeadership(ctx context.Context, name, token string, ttl time.Duration) (*Grant, error) {
	if err := validLeader(name, token); err != nil {
		return nil, err
	}
	if err := validTTL("ttl", ttl); err != nil {
		return nil, err
	}
	body := map[string]any{}
	if ttl > 0 {
		body["ttlMs"] = millis(ttl)
	}
	var out struct {
		Grant
		Term int64 `json:"term"`
	}
	if _, err := c.call(ctx, request{method: http.MethodPut, path: electionPath(name) + "/renew", token: token, body: body}, &out); err != nil {
		return nil, err
	}
	g := out.Grant
	g.Key, g.Mode, g.Fence, g.HoldCount = name, KindLeader, out.Term, 1
	return &g, nil
}

// Resign ends the term of the leader holding token.
func (c *Client) Resign(ctx context.Context, name, token string) error {
	if err := validLeader(name, token); err != nil {
		return err
	}
	_, err := c.call(ctx, request{method: http.MethodDelete, path: electionPath(name), token: token}, nil)
	return err
}

// ForceResign (admin) ends whoever's term.
func (c *Client) ForceResign(ctx context.Context, name string) error {
	if err := validName(name); err != nil {
		return err
	}
	_, err := c.call(ctx, request{method: http.MethodDelete, path: electionPath(name), query: url.Values{"force": {"true"}}}, nil)
	return err
}

// InspectElection: its leader (never the token), term, candidates in line; 404 with neither.
func (c *Client) InspectElection(ctx context.Context, name string) (*ElectionInfo, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	out := new(ElectionInfo)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: electionPath(name)}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListElections (admin): one page of the elections that have a leader.
func (c *Client) ListElections(ctx context.Context, o ListOptions) (*ElectionList, error) {
	out := new(ElectionList)
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/elections", query: listQuery(o)}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// WatchLeadership is the leader's own lost-leadership signal (a watch of its hold).
func (c *Client) WatchLeadership(ctx context.Context, name, token string, wait time.Duration) (*WatchEvent, error) {
	if err := validLeader(name, token); err != nil {
		return nil, err
	}
	return c.watch(ctx, electionPath(name)+"/watch", token, wait)
}

func observeQuery(seen *Observation, wait time.Duration) url.Values {
	q := url.Values{}
	if seen != nil {
		q.Set("after", strconv.FormatInt(seen.Term, 10))
		q.Set("revision", strconv.FormatInt(seen.Revision, 10))
	}
	if wait > 0 {
		q.Set("wait", strconv.FormatInt(millis(wait), 10))
	}
	return q
}

// Observe long-polls the election: at once when it is not as seen says (nil: nothing seen yet),
// else when it changes or the wait runs out (Changed false).
func (c *Client) Observe(ctx context.Context, name string, seen *Observation, wait time.Duration) (*Observation, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	if wait < 0 {
		return nil, invalid("wait", "must not be negative")
	}
	out := new(Observation)
	r := request{method: http.MethodGet, path: electionPath(name) + "/observe", query: observeQuery(seen, wait), timeout: c.timeout + watchWaitOf(wait)}
	if _, err := c.call(ctx, r, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ObserveElection calls fn with every change of the election (an event stream, reconnected after
// each wait from the last event seen) until ctx ends (ctx.Err()) or fn returns an error (that one).
// The first event is the state now: "elected" or "vacant".
func (c *Client) ObserveElection(ctx context.Context, name string, fn func(ElectionEvent) error) error {
	if err := validName(name); err != nil {
		return err
	}
	var seen *Observation
	failures := 0
	for ctx.Err() == nil {
		err := c.observeStream(ctx, name, seen, func(ev ElectionEvent) error {
			failures = 0
			seen = &Observation{Term: ev.Term, Revision: ev.Revision}
			return fn(ev)
		})
		var stop *stopObserving
		switch {
		case errors.As(err, &stop):
			return stop.err
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			var se *Error
			if errors.As(err, &se) && se.Status != http.StatusServiceUnavailable && se.Status != http.StatusTooManyRequests {
				return err
			}
			failures++
			if sleep(ctx, backoff(failures)) != nil {
				return ctx.Err()
			}
		}
	}
	return ctx.Err()
}

type stopObserving struct{ err error }

func (s *stopObserving) Error() string { return s.err.Error() }

// observeStream reads one event stream until it ends (nil), fails, or fn returns an error
// (wrapped in stopObserving).
func (c *Client) observeStream(ctx context.Context, name string, seen *Observation, fn func(ElectionEvent) error) error {
	r := request{method: http.MethodGet, path: electionPath(name) + "/observe", query: observeQuery(seen, 0), accept: "text/event-stream",
		timeout: c.timeout + serviceWatchWait}
	resp, cancel, err := c.open(ctx, r)
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return errorOf(&response{status: resp.StatusCode, requestID: resp.Header.Get("X-Request-Id"), header: resp.Header, body: body})
	}
	lines := bufio.NewScanner(resp.Body)
	var event, id, data string
	for lines.Scan() {
		line := lines.Text()
		switch {
		case line == "":
			if data != "" {
				if event == "error" {
					return errorOf(&response{body: []byte(data), header: http.Header{}})
				}
				ev := ElectionEvent{Type: event, ID: id}
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					return &Error{Code: "invalid_response", Message: "an observe event is not the JSON expected: " + err.Error()}
				}
				if err := fn(ev); err != nil {
					return &stopObserving{err}
				}
			}
			event, id, data = "", "", ""
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(line[len("id:"):])
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimSpace(line[len("data:"):])
		}
	}
	if err := lines.Err(); err != nil && ctx.Err() == nil {
		return &TransportError{Method: http.MethodGet, Path: r.path, Err: err}
	}
	return nil
}

func validName(name string) error {
	if err := validKey(name); err != nil {
		return &InvalidArgumentError{Argument: "name", Reason: err.(*InvalidArgumentError).Reason}
	}
	return nil
}

func validLeader(name, token string) error {
	if err := validName(name); err != nil {
		return err
	}
	return validToken(token)
}
