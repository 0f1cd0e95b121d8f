package query

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
	was := nameTables
	nameTables = on
	return func() { nameTables = was }
}

// SetMaxNameIDs sets the most IDs a name clause becomes; the returned func
// restores it.
func SetMaxNameIDs(n int) (restore func()) {
	was := maxNameIDs
	maxNameIDs = n
	return func() { maxNameIDs = was }
}

// AnsweredByTables reports whether req is answered from the name tables
// and value columns rather than by bleve (in a generation with columns).
func AnsweredByTables(req AnalystRequest) bool {
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
	was := maxSortAll
	maxSortAll = n
	return func() { maxSortAll = was }
}

// SetRecordsPerScan sets when sorts and facets read records' values
// rather than pass over a column (0: always records); the returned func
// restores it.
func SetRecordsPerScan(n uint64) (restore func()) {
	was := recordsPerScan
	recordsPerScan = n
	return func() { recordsPerScan = was }
}
