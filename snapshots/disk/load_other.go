//go:build !linux

package disk

// Load maps a file read-only, populated up front (Map); on Linux it reads
// the file into anonymous memory in huge pages instead.
func Load(name string) (*Loaded, error) { return LoadMapped(name) }
