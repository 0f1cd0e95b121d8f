package synth

import (
	"slices"

	"gds/snapshots"
)

// Rename writes a copy of snap to dir in which every every-th character
// (counted in the snapshot's order) is named rename(name); every other
// record is copied as it stands. source labels the copy in its manifest;
// the copy keeps snap's creation time. Reindexing from snap to the copy is
// an incremental change of 1/every of the characters.
func Rename(snap *snapshots.Snapshot, dir, source string, every int64, rename func(string) string) error {
	w, err := snapshots.Create(dir, snapshots.CreateOptions{Source: source, Zstd: true, Created: snap.Manifest.Created})
	if err != nil {
		return err
	}
	var i int64
	for _, k := range snapshots.Kinds {
		if !snap.Has(k) {
			continue
		}
		if err := w.Touch(k); err != nil {
			w.Abort()
			return err
		}
		err := snap.Each(k, func(rec snapshots.Record, line snapshots.Line) error {
			if k == snapshots.Characters {
				if i++; i%every == 0 {
					c := rec.(*snapshots.Character)
					c.Name = rename(c.Name)
					return w.Add(k, c)
				}
			}
			return w.AddRaw(k, line.Key, slices.Clone(line.Raw))
		})
		if err != nil {
			w.Abort()
			return err
		}
	}
	_, err = w.Commit()
	return err
}
