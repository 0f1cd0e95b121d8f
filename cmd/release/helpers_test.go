package main

import (
	"archive/tar"
	"io"
	"testing"
)

// eachTarEntry calls fn with every entry of the tar stream r in order;
// fn may read the entry's content from tr.
func eachTarEntry(t *testing.T, r io.Reader, fn func(h *tar.Header, tr *tar.Reader)) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		fn(h, tr)
	}
}
