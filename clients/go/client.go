// Package lockservice is the Go client of lock-service: distributed locks, read-write locks,
// semaphores and sessions over HTTP, with a one-call helper (WithLock) that keeps a hold alive on
// its own goroutine and cancels the block's context the moment the hold is lost.
//
// It uses the standard library only. A Client is safe for concurrent use.
package lockservice

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout is the per-request timeout when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// DefaultRetryBudget bounds an acquire's retries beyond its wait when Options.RetryBudget is zero.
const DefaultRetryBudget = 10 * time.Second

// Options configure a Client; every field is optional.
type Options struct {
	// APIKey is sent as "Authorization: Bearer <key>".
	APIKey string
	// Timeout bounds each request (default 10 s). A waiting acquire gets its wait on top.
	Timeout time.Duration
	// RetryBudget: how long past its wait an acquire may keep retrying after a transport error,
	// 503 or 429 (default 10 s; negative: never retry).
	RetryBudget time.Duration
	// UserAgent is sent as User-Agent.
	UserAgent string
	// HTTPClient replaces the shared client (its Timeout should be 0: the library sets deadlines).
	HTTPClient *http.Client
	// TLSConfig, for an https:// service: the CA that signed its certificate (RootCAs) and a client
	// certificate (Certificates) when it requires one; LoadTLSConfig makes one from PEM files. The
	// client then has a connection pool of its own. Not with HTTPClient: configure that one's transport.
	TLSConfig *tls.Config
}

// Client talks to one lock-service base URL.
type Client struct {
	base        *url.URL
	apiKey      string
	timeout     time.Duration
	retryBudget time.Duration
	userAgent   string
	http        *http.Client
}

var sharedTransport = &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConns:        256,
	MaxIdleConnsPerHost: 256,
	IdleConnTimeout:     90 * time.Second,
}

var sharedHTTP = &http.Client{Transport: sharedTransport}

// New makes a client for the service at baseURL (e.g. "http://127.0.0.1:8080").
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &InvalidArgumentError{Argument: "baseURL", Reason: "must be an http(s) URL with a host"}
	}
	c := &Client{base: u, apiKey: opts.APIKey, timeout: opts.Timeout, retryBudget: opts.RetryBudget, userAgent: opts.UserAgent, http: opts.HTTPClient}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.retryBudget == 0 {
		c.retryBudget = DefaultRetryBudget
	} else if c.retryBudget < 0 {
		c.retryBudget = 0
	}
	if opts.TLSConfig != nil {
		if opts.HTTPClient != nil {
			return nil, &InvalidArgumentError{Argument: "TLSConfig", Reason: "give it to your HTTPClient's transport, not both"}
		}
		if u.Scheme != "https" {
			return nil, &InvalidArgumentError{Argument: "TLSConfig", Reason: "only for an https:// service URL"}
		}
		transport := sharedTransport.Clone()
		transport.TLSClientConfig = opts.TLSConfig
		c.http = &http.Client{Transport: transport}
	}
	if c.http == nil {
		c.http = sharedHTTP
	}
	return c, nil
}

// request is one HTTP exchange.
type request struct {
	method  string
	path    string // already escaped
	query   url.Values
	token   string // Lock-Token header
	body    any
	timeout time.Duration // 0: the client's
	accept  string
}

type response struct {
	status    int
	requestID string
	header    http.Header
	body      []byte
}

// send performs one request, without retries; any answer (also 4xx/5xx) is a response, no answer
// a *TransportError. The context's own cancellation is returned as ctx.Err().
func (c *Client) send(ctx context.Context, r request) (*response, error) {
	resp, cancel, err := c.open(ctx, r)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, c.transportError(ctx, r, err)
	}
	return &response{status: resp.StatusCode, requestID: resp.Header.Get("X-Request-Id"), header: resp.Header, body: body}, nil
}

// open sends a request and returns the response with its body unread; cancel ends its deadline.
func (c *Client) open(ctx context.Context, r request) (*http.Response, context.CancelFunc, error) {
	timeout := r.timeout
	if timeout <= 0 {
		timeout = c.timeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	u := *c.base
	u.Path = c.base.Path + r.path
	u.RawPath = c.base.EscapedPath() + r.path
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			cancel()
			return nil, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(rctx, r.method, u.String(), body)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		req.Header.Set("Lock-Token", r.token)
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		return nil, nil, c.transportError(ctx, r, err)
	}
	return resp, cancel, nil
}

func (c *Client) transportError(ctx context.Context, r request, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ne net.Error
	timeout := errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL holds no secret, but keep the message short
	}
	return &TransportError{Method: r.method, Path: redacted(r.path), Timeout: timeout, Err: err}
}

// redacted is a path fit for an error message: a session id is a secret, like a token.
func redacted(path string) string {
	const sessions = "/sessions/"
	if !strings.HasPrefix(path, sessions) || len(path) == len(sessions) {
		return path
	}
	rest := path[len(sessions):]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return sessions + "[redacted]" + rest[i:]
	}
	return sessions + "[redacted]"
}

// call sends a request and decodes a 2xx answer into out (when non-nil), or returns the *Error.
func (c *Client) call(ctx context.Context, r request, out any) (*response, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.status < 200 || resp.status > 299 {
		return resp, errorOf(resp)
	}
	if out != nil {
		if err := json.Unmarshal(resp.body, out); err != nil {
			return resp, &Error{Code: "invalid_response", Status: resp.status, Message: "the answer is not the JSON expected: " + err.Error(), RequestID: resp.requestID}
		}
	}
	return resp, nil
}

// errorOf decodes an error answer into an *Error.
func errorOf(resp *response) *Error {
	e := &Error{Status: resp.status, RequestID: resp.requestID}
	var body map[string]any
	if json.Unmarshal(resp.body, &body) != nil || body == nil {
		e.Code = "http_" + strconv.Itoa(resp.status)
		e.Message = "the service answered " + strconv.Itoa(resp.status) + " without a JSON error body"
		return e
	}
	e.Body = body
	var fields struct {
		Error        string      `json:"error"`
		Message      string      `json:"message"`
		RetryAfterMs *int64      `json:"retryAfterMs"`
		WaitedMs     int64       `json:"waitedMs"`
		Owners       []string    `json:"owners"`
		Limit        int         `json:"limit"`
		Permits      int         `json:"permits"`
		Reason       string      `json:"reason"`
		Nodes        []NodeState `json:"nodes"`
		Issues       []Issue     `json:"issues"`
		DelayedUntil time.Time   `json:"delayedUntil"`
	}
	_ = json.Unmarshal(resp.body, &fields)
	e.Code, e.Message, e.Owners, e.Limit, e.Permits = fields.Error, fields.Message, fields.Owners, fields.Limit, fields.Permits
	e.Reason, e.Nodes, e.Issues, e.Waited = fields.Reason, fields.Nodes, fields.Issues, ms(fields.WaitedMs)
	e.DelayedUntil = fields.DelayedUntil
	if e.Code == "" {
		e.Code = "http_" + strconv.Itoa(resp.status)
	}
	if fields.RetryAfterMs != nil {
		e.RetryAfter = ms(*fields.RetryAfterMs)
	} else if s, err := strconv.Atoi(resp.header.Get("Retry-After")); err == nil && s >= 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

func millis(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }
