// Package loopback picks free loopback addresses for programs that cannot
// report the port they bound (gds started by a tool, an S3 server, a
// proxy). gds itself binds 127.0.0.1:0 and logs its address where it can:
// a port picked here and bound later can be taken meanwhile.
package loopback

import "net"

// FreeAddr is a 127.0.0.1 address whose port was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
