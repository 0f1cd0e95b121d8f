package indexer

import "context"

// WithBeforeBleve returns o with a hook run at the start of each build's
// bleve phase, after the generation went live for searches.
func WithBeforeBleve(o Options, f func(ctx context.Context, generation uint64) error) Options {
	o.beforeBleve = f
	return o
}

// SetMemoryBudget makes the memory the process may use look like n bytes
// until restore.
func SetMemoryBudget(n int64) (restore func()) {
	old := memoryBudget
	memoryBudget = func() int64 { return n }
	return func() { memoryBudget = old }
}
