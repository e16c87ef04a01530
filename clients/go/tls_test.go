package lockservice

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func tlsClient(t *testing.T, caFile, certFile, keyFile string) *Client {
	t.Helper()
	config, err := LoadTLSConfig(caFile, certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(env.TLS.Service, Options{APIKey: env.AdminKey, TLSConfig: config, RetryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTLSWithACAAndAClientCertificate(t *testing.T) {
	ctx := context.Background()
	c := tlsClient(t, env.TLS.CAFile, env.TLS.CertFile, env.TLS.KeyFile)
	k := uniqueKey(t, "tls-files")
	grant, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
	if err != nil {
		t.Fatalf("acquire over mTLS: %v", err)
	}
	if grant.Fence <= 0 {
		t.Fatalf("fence %d", grant.Fence)
	}
	if _, err := c.InspectLock(ctx, k); err != nil {
		t.Fatalf("inspect over mTLS: %v", err)
	}
	if _, err := c.Release(ctx, KindLock, k, grant.Token); err != nil {
		t.Fatal(err)
	}
}

func TestTLSRefusedClientsTakeNothing(t *testing.T) {
	ctx := context.Background()
	k := uniqueKey(t, "tls-refused")
	cases := map[string]*Client{
		"a CA that did not sign the service": tlsClient(t, env.TLS.OtherCAFile, env.TLS.CertFile, env.TLS.KeyFile),
		"no client certificate":              tlsClient(t, env.TLS.CAFile, "", ""),
	}
	for what, c := range cases {
		_, err := c.AcquireGrant(ctx, k, AcquireOptions{TTL: 10 * time.Second})
		var transport *TransportError
		if !errors.As(err, &transport) {
			t.Fatalf("%s: want a TransportError, got %v", what, err)
		}
		if !strings.Contains(err.Error(), "certificate") && !strings.Contains(err.Error(), "tls") {
			t.Errorf("%s: the error should say why: %v", what, err)
		}
	}
	if _, err := admin(t).InspectLock(ctx, k); !errors.Is(err, ErrLockNotFound) {
		t.Fatalf("nothing may be held: %v", err)
	}
}

func TestTLSConfigMisuse(t *testing.T) {
	config, _ := LoadTLSConfig("", "", "")
	if _, err := New(env.Service, Options{TLSConfig: config}); err == nil {
		t.Error("TLSConfig for an http:// URL must be refused")
	}
	if _, err := LoadTLSConfig(env.TLS.CAFile, env.TLS.CertFile, ""); err == nil {
		t.Error("a certificate without its key must be refused")
	}
	if _, err := LoadTLSConfig(env.TLS.CertFile+".missing", "", ""); err == nil {
		t.Error("a missing CA file must be an error")
	}
}
