package disk

// Map maps a file read-only; an empty file maps to nil. populate asks the
// kernel to read the whole file in up front where it can (Linux), so first
// touches do not fault later. Where mmap is not available it reads the
// file into memory.
func Map(name string, populate bool) ([]byte, error) {
	b, _, _, err := MapID(name, populate)
	return b, err
}
