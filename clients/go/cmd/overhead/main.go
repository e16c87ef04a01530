// Command overhead measures what the Go client costs over raw net/http: acquire + release cycles
// through the library and through hand-written requests (same connection reuse, a client-chosen
// token each cycle, one key per worker), in alternating rounds. It prints one JSON line:
//
//	{"language":"go","library":<cycles/s>,"raw":<cycles/s>,"ratio":<library/raw>}
//
// Usage: overhead --url http://127.0.0.1:8080 [--key SECRET] [--duration 10] [--concurrency 8]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	lockservice "github.com/lock-service/lock-service/clients/go"
)

func main() {
	base := flag.String("url", envOr("LOCK_SERVICE_URL", "http://127.0.0.1:8080"), "the service's base URL")
	key := flag.String("key", os.Getenv("LOCK_SERVICE_KEY"), "API key (default: $LOCK_SERVICE_KEY)")
	duration := flag.Float64("duration", 10, "seconds of measurement (both modes together)")
	concurrency := flag.Int("concurrency", 8, "workers, each on its own key")
	flag.Parse()
	if err := run(*base, *key, time.Duration(*duration*float64(time.Second)), *concurrency); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// cycle is one acquire + release by worker w.
type cycle func(ctx context.Context, w int) error

func run(base, key string, duration time.Duration, concurrency int) error {
	client, err := lockservice.New(base, lockservice.Options{APIKey: key})
	if err != nil {
		return err
	}
	prefix := fmt.Sprintf("overhead-go-%d-", os.Getpid())
	keyOf := func(w int) string { return fmt.Sprintf("%s%d", prefix, w) }
	library := func(ctx context.Context, w int) error {
		g, err := client.AcquireGrant(ctx, keyOf(w), lockservice.AcquireOptions{TTL: 5 * time.Second})
		if err != nil {
			return err
		}
		_, err = client.Release(ctx, lockservice.KindLock, keyOf(w), g.Token)
		return err
	}
	raw := rawCycle(base, key, keyOf)
	modes := []struct {
		name string
		fn   cycle
	}{{"library", library}, {"raw", raw}}

	for _, m := range modes { // warm up connections and code paths
		if _, err := measure(m.fn, concurrency, 300*time.Millisecond); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
	}
	round := duration / 10
	if round < 250*time.Millisecond {
		round = 250 * time.Millisecond
	}
	cycles := map[string]int64{}
	spent := map[string]time.Duration{}
	for elapsed := time.Duration(0); elapsed < duration; {
		for _, m := range modes {
			start := time.Now()
			n, err := measure(m.fn, concurrency, round)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			took := time.Since(start)
			cycles[m.name] += n
			spent[m.name] += took
			elapsed += took
		}
	}
	lib := float64(cycles["library"]) / spent["library"].Seconds()
	rw := float64(cycles["raw"]) / spent["raw"].Seconds()
	out, _ := json.Marshal(map[string]any{"language": "go", "library": round2(lib), "raw": round2(rw), "ratio": round2(lib / rw)})
	fmt.Println(string(out))
	return nil
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// measure runs concurrency workers for d and counts their completed cycles.
func measure(fn cycle, concurrency int, d time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var n int64
	var wg sync.WaitGroup
	errs := make(chan error, concurrency)
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := fn(context.Background(), w); err != nil {
					errs <- err
					return
				}
				atomic.AddInt64(&n, 1)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	return n, <-errs
}

// rawCycle is the same acquire + release written against net/http directly, with a transport
// configured like the library's.
func rawCycle(base, key string, keyOf func(int) string) cycle {
	hc := &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}}
	do := func(ctx context.Context, method, url, token string, body []byte) (int, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Lock-Token", token)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	return func(ctx context.Context, w int) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		url := base + "/locks/" + keyOf(w)
		token := lockservice.NewToken()
		body, _ := json.Marshal(map[string]any{"ttlMs": 5000, "token": token})
		status, answer, err := do(ctx, http.MethodPost, url, "", body)
		if err != nil {
			return err
		}
		var grant struct {
			Fence int64 `json:"fence"`
		}
		if status != http.StatusCreated && status != http.StatusOK || json.Unmarshal(answer, &grant) != nil {
			return fmt.Errorf("acquire answered %d", status)
		}
		if status, _, err = do(ctx, http.MethodDelete, url, token, nil); err != nil || status != http.StatusOK {
			return fmt.Errorf("release answered %d (%v)", status, err)
		}
		return nil
	}
}
