package api

// structureRoutes are the corporation structures routes (spec §4.4, §4.5, §4.7).
func (s *server) structureRoutes() []Route { return nil }
