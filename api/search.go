package api

// searchRoutes are the public and character search routes (spec §4.1, §4.2).
func (s *server) searchRoutes() []Route { return nil }
