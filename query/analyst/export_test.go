package analyst

// SetExportLimits lowers the export page and cap for a test; the returned
// func restores them.
func SetExportLimits(page, limit int) (restore func()) {
	p, c := exportPage, exportCap
	exportPage, exportCap = page, limit
	return func() { exportPage, exportCap = p, c }
}

// SetNameTables turns answering name-only queries from the name tables on
// or off; the returned func restores the setting.
func SetNameTables(on bool) (restore func()) {
	return setForTest(&nameTables, on)
}

// SetMaxNameIDs sets the most IDs a name clause becomes; the returned func
// restores it.
func SetMaxNameIDs(n int) (restore func()) {
	return setForTest(&maxNameIDs, n)
}

// AnsweredByTables reports whether req is answered from the name tables
// and value columns rather than by bleve (in a generation with columns).
func AnsweredByTables(req Request) bool {
	p, err := prepare(req, false)
	if err != nil {
		return false
	}
	_, ok := nameOnly(p, true)
	return ok
}

// SetMaxSortAll sets the most matches a sort reads every value of; the
// returned func restores it.
func SetMaxSortAll(n int) (restore func()) {
	return setForTest(&maxSortAll, n)
}

// SetRecordsPerScan sets when sorts and facets read records' values
// rather than pass over a column (0: always records); the returned func
// restores it.
func SetRecordsPerScan(n uint64) (restore func()) {
	return setForTest(&recordsPerScan, n)
}

// setForTest sets *p to v and returns the func that puts back what it was.
func setForTest[T any](p *T, v T) (restore func()) {
	was := *p
	*p = v
	return func() { *p = was }
}
