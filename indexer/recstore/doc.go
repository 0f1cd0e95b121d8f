// Package recstore owns the record store format: one kind's records of a
// generation, as the snapshot had them, for lookups by key, structures by
// corporation and documents by path. Writer writes a store whole or as a
// delta beside a previous base; Open maps it (or holds it in memory) and
// Store reads it. Package indexer decides what a build writes; this package
// alone knows the bytes.
//
// A store is four kinds of file in a generation's records/ directory:
//
//	<kind>.data      the base: the blocks a full build wrote; hard-linked by
//	                 the incremental builds after it
//	<kind>.delta     the blocks of records added or changed since (each
//	                 incremental build rewrites it, with the base's dictionary)
//	<kind>.idx       the index: counts, the dictionary, per record its key,
//	                 where it is and its xxhash64, per block where it starts,
//	                 the shapes of packed records (layout: blocks.go); a
//	                 store written whole has it
//	<kind>.idx-base  beside a delta: the index of the base, hard-linked
//	<kind>.idx-delta the records the base index does not hold as they are
//	                 now: which of its records are hidden, the keys,
//	                 locations and hashes of the delta's (indexdelta.go)
//	<kind>.by-<group> sorted (group key, position) int64 pairs
//
// A record (a JSON line, in key order) is packed (indexer/recpack): its
// keys and value types, a shape, are kept once in the index, and the record
// holds its shape's number and its values in binary. The writer unpacks
// what it packed and keeps any line that does not come back byte for byte
// (number 0), so a lookup always gives the snapshot's line. Packed records
// are grouped into blocks of about 512 bytes (at most 64 records), each a
// zstd frame compressed with a dictionary of the first records the full
// build wrote, without entropy coding and without zstd's magic number (the
// reader puts it back). A lookup binary-searches the key, decodes one block
// into a pooled buffer and unpacks the record's line.
//
// # Versions
//
// The magic number at the start of the index names the version. Every
// version below is still read; the next build writes a store of an older
// version whole in the current one instead of adding a delta to it. A
// binary refuses a version or flag newer than it knows (a fleet's replicas
// are upgraded before its indexer).
//
//	GDSSTO01  2026-11-21  raw JSON lines, start and length per record,
//	                      FNV-64a hashes
//	GDSSTO02  2026-11-21  the same with xxhash64 hashes (incremental builds)
//	GDSSTO03  2026-11-24  2 KiB zstd blocks, whole frames, a 32 KiB
//	                      dictionary, uint32 keys where they fit, per-record
//	                      locations and uint64 offsets
//	GDSSTO04  2026-11-24  1 KiB blocks, a 256 KiB dictionary, frames without
//	                      their magic, block starts and uint32 offsets
//	          2026-11-25  (flags, same magic) blocks without entropy coding;
//	                      a 128 KiB dictionary; records packed (flag 8) in
//	                      512-byte blocks. Stores of lines, entropy-coded or
//	                      with the larger dictionary, are read alike.
//	GDSSTD01  2026-11-29  the index delta beside a base index (the base's
//	                      GDSSTO04 index, unchanged); a store with a delta
//	                      and its index whole is read alike
package recstore
