package synth

import (
	"encoding/json"
	"fmt"

	"gds/snapshots"
)

// emitFunc hands one generated record to the writer. Records of a kind
// must come in ascending key order.
type emitFunc func(k snapshots.Kind, rec snapshots.Record) error

// output is a kind a step writes and how many records it expects (for
// progress; 0 when unknown).
type output struct {
	kind  snapshots.Kind
	total int64
}

// encoded is a generated record, validated and encoded.
type encoded struct {
	kind snapshots.Kind
	key  int64
	raw  []byte
}

const batchSize = 1024

// step runs gen on its own goroutine, which also validates and encodes
// each record, while this goroutine merges, compresses and hashes them
// into the outputs' files: the two halves of the work take about as long,
// so on two cores they overlap. gen sees no records of the base.
func (g *generator) step(outs []output, gen func(emit emitFunc) error) error {
	sinks := map[snapshots.Kind]*sink{}
	for _, o := range outs {
		s := g.sink(o.kind, o.total)
		defer s.release()
		sinks[o.kind] = s
	}
	batches := make(chan []encoded, 4)
	stop := make(chan struct{})
	var genErr error
	go func() {
		defer close(batches)
		genErr = produce(batches, stop, sinks, gen)
	}()
	var writeErr error
	for batch := range batches {
		if writeErr != nil {
			continue // drain until the producer sees stop
		}
		for _, e := range batch {
			if writeErr = sinks[e.kind].addRaw(e.key, e.raw); writeErr != nil {
				close(stop)
				break
			}
		}
	}
	if writeErr != nil {
		return writeErr
	}
	if genErr != nil {
		return genErr
	}
	for _, o := range outs {
		if err := sinks[o.kind].close(); err != nil {
			return err
		}
	}
	return nil
}

// produce runs gen, sending its records in batches until gen ends or
// stop is closed.
func produce(batches chan<- []encoded, stop <-chan struct{}, sinks map[snapshots.Kind]*sink, gen func(emit emitFunc) error) error {
	batch := make([]encoded, 0, batchSize)
	send := func() error {
		select {
		case batches <- batch:
			batch = make([]encoded, 0, batchSize)
			return nil
		case <-stop:
			return errStopped
		}
	}
	err := gen(func(k snapshots.Kind, rec snapshots.Record) error {
		if sinks[k] == nil {
			return fmt.Errorf("%s: not an output of this step", k)
		}
		if err := rec.Validate(); err != nil {
			return fmt.Errorf("generated %s id %d: %w", k, rec.Key(), err)
		}
		raw, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("generated %s id %d: %w", k, rec.Key(), err)
		}
		batch = append(batch, encoded{kind: k, key: rec.Key(), raw: raw})
		if len(batch) == batchSize {
			return send()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = send()
	}
	return err
}
