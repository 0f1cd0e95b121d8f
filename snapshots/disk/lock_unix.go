//go:build unix

package disk

import (
	"errors"
	"os"
	"syscall"
)

// Lock is an exclusive advisory lock on a file (flock), held across
// processes; the kernel releases it when the holder dies, even by kill -9.
type Lock struct{ f *os.File }

// TryLock takes the lock on path (creating the file) if no one holds it;
// ok is false when another holder has it.
func TryLock(path string, perm os.FileMode) (l *Lock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, perm)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &Lock{f: f}, true, nil
}

// Unlock releases the lock; a nil Lock is fine.
func (l *Lock) Unlock() {
	if l != nil && l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		_ = l.f.Close()
		l.f = nil
	}
}
