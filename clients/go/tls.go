package lockservice

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// LoadTLSConfig makes an Options.TLSConfig from PEM files: caFile, the CA that signed the
// service's certificate ("" for the system's CAs), and certFile and keyFile, a client certificate
// for a service that requires one (both "" for none).
func LoadTLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("lockservice: CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("lockservice: CA file %q holds no PEM certificate", caFile)
		}
		config.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, &InvalidArgumentError{Argument: "certFile", Reason: "certFile and keyFile go together"}
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("lockservice: client certificate: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}
