package indexer

import (
	"os"
	"testing"
)

// TestMain runs this package's tests with characters in bleve, as every
// other category: most of them test the bleve shards' mechanics (phases,
// patches, shard counts) on snapshots of characters. The tests of the
// categories the tables answer alone turn it off (TablesOnlyForTest).
func TestMain(m *testing.M) {
	bleveCharactersAlways = true
	os.Exit(m.Run())
}
