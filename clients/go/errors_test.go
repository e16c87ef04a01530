package lockservice

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestTheServicesLimitsAreTooManyErrors(t *testing.T) {
	limited := errorOf(&response{status: 429, body: []byte(`{"error":"rate_limited","message":"m","retryAfterMs":250}`), header: http.Header{}})
	if !IsRateLimited(limited) || !IsTooMany(limited) || !errors.Is(limited, ErrRateLimited) {
		t.Fatalf("rate_limited: IsRateLimited %v, IsTooMany %v, Is(ErrRateLimited) %v", IsRateLimited(limited), IsTooMany(limited), errors.Is(limited, ErrRateLimited))
	}
	if limited.RetryAfter != 250*time.Millisecond {
		t.Fatalf("RetryAfter %v, want 250ms", limited.RetryAfter)
	}
	header := http.Header{}
	header.Set("Retry-After", "2")
	streams := errorOf(&response{status: 429, body: []byte(`{"error":"too_many_streams","message":"m"}`), header: header})
	if !IsTooMany(streams) || !errors.Is(streams, ErrTooManyStreams) || IsRateLimited(streams) {
		t.Fatalf("too_many_streams: IsTooMany %v, Is(ErrTooManyStreams) %v", IsTooMany(streams), errors.Is(streams, ErrTooManyStreams))
	}
	if streams.RetryAfter != 2*time.Second {
		t.Fatalf("RetryAfter %v from the header, want 2s", streams.RetryAfter)
	}
}
