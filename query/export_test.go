package query

// SetExportLimits lowers the export page and cap for a test; the returned
// func restores them.
func SetExportLimits(page, limit int) (restore func()) {
	p, c := exportPage, exportCap
	exportPage, exportCap = page, limit
	return func() { exportPage, exportCap = p, c }
}
