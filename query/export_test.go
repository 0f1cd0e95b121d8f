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
