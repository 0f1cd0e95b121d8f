package api

// documentRoutes are the other routes of spec §4.6, answered from the
// snapshot's documents.
func (s *server) documentRoutes() []Route { return nil }
