package lockservice

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// environment is the JSON line clients/conformance/environment.ts prints.
type environment struct {
	Service      string `json:"service"`
	Proxied      string `json:"proxied"`
	Control      string `json:"control"`
	AdminKey     string `json:"adminKey"`
	ScopedKey    string `json:"scopedKey"`
	ScopedPrefix string `json:"scopedPrefix"`
	ReadOnlyKey  string `json:"readOnlyKey"`
	MaxWaiters   int    `json:"maxWaiters"`
	// The same service over HTTPS, requiring client certificates (PEM files).
	TLS struct {
		Service     string `json:"service"`
		CAFile      string `json:"caFile"`
		CertFile    string `json:"certFile"`
		KeyFile     string `json:"keyFile"`
		OtherCAFile string `json:"otherCaFile"`
	} `json:"tls"`
}

var env environment

const repoRoot = "../.."

func TestMain(m *testing.M) {
	stop, err := startEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance environment:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startEnvironment uses LOCK_SERVICE_CONFORMANCE when set, else starts the environment and stops
// it (closing its stdin) when the tests are done.
func startEnvironment() (func(), error) {
	if line := os.Getenv("LOCK_SERVICE_CONFORMANCE"); line != "" {
		return func() {}, json.Unmarshal([]byte(line), &env)
	}
	cmd := exec.Command("node", "--import", "tsx", filepath.Join("clients", "conformance", "environment.ts"))
	cmd.Dir = repoRoot
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	first := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil {
			err = json.Unmarshal([]byte(line), &env)
		}
		first <- err
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case err := <-first:
		if err != nil {
			stop()
			return nil, err
		}
	case <-time.After(90 * time.Second):
		stop()
		return nil, fmt.Errorf("no JSON line within 90 s")
	}
	return stop, nil
}

// control posts one control action and decodes its answer.
func control(t *testing.T, action string) map[string]any {
	t.Helper()
	resp, err := http.Post(env.Control+action, "application/json", nil)
	if err != nil {
		t.Fatalf("control %s: %v", action, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 {
		t.Fatalf("control %s: %d %v", action, resp.StatusCode, out)
	}
	return out
}

// sent is one request a recorder saw.
type sent struct {
	at         time.Time
	method     string
	path       string
	status     int // 0: no answer
	retryAfter string
}

// recorder is a RoundTripper that records every request (with its own connection pool).
type recorder struct {
	mu    sync.Mutex
	base  http.RoundTripper
	sends []sent
}

func newRecorder() *recorder {
	return &recorder{base: http.DefaultTransport.(*http.Transport).Clone()}
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	s := sent{at: time.Now(), method: req.Method, path: req.URL.Path}
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		s.status, s.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	}
	r.mu.Lock()
	r.sends = append(r.sends, s)
	r.mu.Unlock()
	return resp, err
}

func (r *recorder) requests(method, pathSuffix string) []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sent
	for _, s := range r.sends {
		if s.method == method && strings.HasSuffix(s.path, pathSuffix) {
			out = append(out, s)
		}
	}
	return out
}

func newClient(t *testing.T, base, key string, o Options) *Client {
	t.Helper()
	o.APIKey = key
	c, err := New(base, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func admin(t *testing.T) *Client { return newClient(t, env.Service, env.AdminKey, Options{}) }

var keySeq struct {
	sync.Mutex
	n int
}

// uniqueKey is a fresh key for this test run.
func uniqueKey(t *testing.T, name string) string {
	keySeq.Lock()
	keySeq.n++
	n := keySeq.n
	keySeq.Unlock()
	return fmt.Sprintf("go-%s-%d-%d:%s", strings.ReplaceAll(t.Name(), "/", "."), os.Getpid(), n, name)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyAll(w io.Writer, r io.ReadCloser) (int64, error) {
	defer r.Close()
	return io.Copy(w, r)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
