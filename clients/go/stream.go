package lockservice

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// EventStream is a watch as Server-Sent Events: held events (at once and after each renewal the
// service sees), then one lost event and the end; or the end when the wait runs out.
//
//	for s.Next() { ev := s.Event() … }
//	if err := s.Err(); err != nil { … }
type EventStream struct {
	body   io.ReadCloser
	cancel context.CancelFunc
	lines  *bufio.Scanner
	ev     WatchEvent
	err    error
	done   bool
}

// WatchStream opens an event-stream watch on a hold (wait 0: the service's default).
func (c *Client) WatchStream(ctx context.Context, kind Kind, key, token string, wait time.Duration) (*EventStream, error) {
	if err := validHold(kind, key, token); err != nil {
		return nil, err
	}
	return c.stream(ctx, holdPath(kind, key)+"/watch", token, wait)
}

// WatchSessionStream opens an event-stream watch on a session.
func (c *Client) WatchSessionStream(ctx context.Context, id string, wait time.Duration) (*EventStream, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	return c.stream(ctx, sessionPath(id)+"/watch", "", wait)
}

func (c *Client) stream(ctx context.Context, path, token string, wait time.Duration) (*EventStream, error) {
	if wait < 0 {
		return nil, invalid("wait", "must not be negative")
	}
	q := url.Values{}
	if wait > 0 {
		q.Set("wait", strconv.FormatInt(millis(wait), 10))
	}
	r := request{method: http.MethodGet, path: path, query: q, token: token, accept: "text/event-stream", timeout: c.timeout + watchWaitOf(wait)}
	resp, cancel, err := c.open(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return nil, errorOf(&response{status: resp.StatusCode, requestID: resp.Header.Get("X-Request-Id"), header: resp.Header, body: body})
	}
	return &EventStream{body: resp.Body, cancel: cancel, lines: bufio.NewScanner(resp.Body)}, nil
}

// Next waits for the next event; false at the end of the stream (then see Err).
func (s *EventStream) Next() bool {
	if s.done {
		return false
	}
	var event, data string
	for s.lines.Scan() {
		line := s.lines.Text()
		switch {
		case line == "":
			if data == "" {
				continue
			}
			return s.dispatch(event, data)
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimSpace(line[len("data:"):])
		}
	}
	s.done = true
	if err := s.lines.Err(); err != nil {
		s.err = &TransportError{Method: http.MethodGet, Path: "watch stream", Err: err}
	}
	s.Close()
	return false
}

func (s *EventStream) dispatch(event, data string) bool {
	if event == "error" {
		resp := &response{status: 0, body: []byte(data), header: http.Header{}}
		s.err = errorOf(resp)
		s.done = true
		s.Close()
		return false
	}
	var ev WatchEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		s.err = &Error{Code: "invalid_response", Message: "a watch event is not the JSON expected: " + err.Error()}
		s.done = true
		s.Close()
		return false
	}
	s.ev = ev
	if !ev.Held {
		s.done = true
	}
	return true
}

// Event is the event Next found.
func (s *EventStream) Event() WatchEvent { return s.ev }

// Err is why the stream ended early (nil at a normal end).
func (s *EventStream) Err() error { return s.err }

// Close ends the stream.
func (s *EventStream) Close() error {
	s.cancel()
	return s.body.Close()
}
