package loopback

import (
	"net"
	"testing"
)

// FreeAddr names a loopback port that a listener can bind once it is
// returned.
func TestFreeAddr(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("FreeAddr = %q (%v), want 127.0.0.1 and a port", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("binding %s: %v", addr, err)
	}
	l.Close()
}
