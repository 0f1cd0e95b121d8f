package api

// lookupRoutes resolve the IDs a search returns (spec §4.3).
func (s *server) lookupRoutes() []Route { return nil }
