package indexer

import (
	"fmt"
	"path/filepath"

	"gds/indexer/pace"
	"gds/indexer/recstore"
	"gds/snapshots"
)

// A category read whole has its record store written by a second pass
// over its file (storeJob), which runs beside the category's tables: the
// first pass only decodes the records. Compressing a store's blocks is
// about as much CPU as decoding its records, and the tables (the largest
// category's most of all) were a single goroutine's work after the read,
// leaving the second core idle; the second pass costs decompressing the
// snapshot file again. Its lines are not decoded again: the first pass
// validated these very bytes, and the file's order, count and digest are
// checked again all the same.

// storeJob is a kind's store being written by a second pass.
type storeJob struct {
	kind snapshots.Kind
	done chan struct{}
	err  error
}

// writeStoreBeside starts the second pass of a kind read with rd.split.
func (b *builder) writeStoreBeside(kind snapshots.Kind, rd readResult) {
	job := &storeJob{kind: kind, done: make(chan struct{})}
	b.stores = append(b.stores, job)
	var prev *recstore.Store
	if b.prev != nil {
		prev = b.prev.Store(kind)
	}
	corps := rd.corps // not rd: its docs must not live on here
	go func() {
		defer close(job.done)
		job.err = b.writeStore(kind, prev, corps)
	}()
}

// writeStore writes kind's store whole from its file; corps, when set, is
// each record's corporation (the structures' group).
func (b *builder) writeStore(kind snapshots.Kind, prev *recstore.Store, corps []int64) error {
	sw, err := recstore.NewWriter(filepath.Join(b.dir, recordsDir), string(kind), prev)
	if err != nil {
		return err
	}
	sw.Reserve(int(b.snap.Count(kind)))
	i := 0
	tick := pace.Every(b.ctx, recordsPerPace)
	opts := snapshots.EachOptions{Skip: func(int64, []byte) bool { return true }}
	err = b.snap.EachWith(kind, opts, func(_ snapshots.Record, line snapshots.Line) error {
		tick()
		if err := sw.Add(line.Key, line.Raw); err != nil {
			return err
		}
		if corps != nil {
			if i >= len(corps) {
				return fmt.Errorf("the file has more records than its first reading")
			}
			sw.Group(groupCorporation, corps[i])
		}
		if i++; i%100000 == 0 {
			return b.ctx.Err()
		}
		return nil
	})
	if err == nil && corps != nil && i != len(corps) {
		err = fmt.Errorf("the file has %d records, its first reading %d", i, len(corps))
	}
	if err != nil {
		sw.Abort()
		return err
	}
	return sw.Close()
}

// finishStores waits for every store still being written and returns the
// first error.
func (b *builder) finishStores() error {
	var first error
	for _, job := range b.stores {
		<-job.done
		if job.err != nil && first == nil {
			first = fmt.Errorf("%s: record store: %w", job.kind, job.err)
		}
	}
	b.stores = nil
	return first
}
