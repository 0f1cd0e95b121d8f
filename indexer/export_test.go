package indexer

import "context"

// WithBeforeBleve returns o with a hook run at the start of each build's
// bleve phase, after the generation went live for searches.
func WithBeforeBleve(o Options, f func(ctx context.Context, generation uint64) error) Options {
	o.beforeBleve = f
	return o
}
