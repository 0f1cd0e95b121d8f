package snapshots

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// structure returns a valid structure that a test case then breaks.
func structure(edit func(s *Structure)) *Structure {
	s := &Structure{ID: 1021975535893, Name: "Jita - Keepstar", TypeID: 35834, CorporationID: 98000001, SystemID: 30000142, ProfileID: 1,
		State: "shield_vulnerable", ReinforceWeekday: 2, ReinforceHour: 18,
		CurrentVul: []Window{{Day: 2, Hour: 18}}, NextVul: []Window{}}
	if edit != nil {
		edit(s)
	}
	return s
}

func TestValidate(t *testing.T) {
	apply := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rec  Record
		want string // "" means valid
	}{
		// Structures: v2 fields, v1 windows, services, access.
		{"structure valid", structure(nil), ""},
		{"structure with the next_reinforce trio", structure(func(s *Structure) {
			s.NextReinforceWeekday, s.NextReinforceHour, s.NextReinforceApply = ptr(6), ptr(23), &apply
		}), ""},
		{"structure trio without apply", structure(func(s *Structure) {
			s.NextReinforceWeekday, s.NextReinforceHour = ptr(1), ptr(2)
		}), "next_reinforce_weekday, next_reinforce_hour and next_reinforce_apply must be given together"},
		{"structure trio with only apply", structure(func(s *Structure) { s.NextReinforceApply = &apply }), "must be given together"},
		{"structure next weekday 7", structure(func(s *Structure) {
			s.NextReinforceWeekday, s.NextReinforceHour, s.NextReinforceApply = ptr(7), ptr(0), &apply
		}), "next_reinforce_weekday: must be 0 to 6, got 7"},
		{"structure next hour 24", structure(func(s *Structure) {
			s.NextReinforceWeekday, s.NextReinforceHour, s.NextReinforceApply = ptr(0), ptr(24), &apply
		}), "next_reinforce_hour: must be 0 to 23, got 24"},
		{"structure reinforce weekday -1", structure(func(s *Structure) { s.ReinforceWeekday = -1 }), "reinforce_weekday: must be 0 to 6, got -1"},
		{"structure reinforce hour 24", structure(func(s *Structure) { s.ReinforceHour = 24 }), "reinforce_hour: must be 0 to 23, got 24"},
		{"structure window day 7", structure(func(s *Structure) { s.CurrentVul = []Window{{Day: 0, Hour: 0}, {Day: 7, Hour: 1}} }), "current_vul[1].day: must be 0 to 6, got 7"},
		{"structure window hour 24", structure(func(s *Structure) { s.NextVul = []Window{{Day: 6, Hour: 24}} }), "next_vul[0].hour: must be 0 to 23, got 24"},
		{"structure window bounds are inclusive", structure(func(s *Structure) { s.CurrentVul = []Window{{Day: 0, Hour: 0}, {Day: 6, Hour: 23}} }), ""},
		{"structure unknown state", structure(func(s *Structure) { s.State = "exploded" }), `state: unknown structure state "exploded"`},
		{"structure service without name", structure(func(s *Structure) { s.Services = []Service{{State: "online"}} }), "services[0].name: missing"},
		{"structure service state", structure(func(s *Structure) { s.Services = []Service{{Name: "Market", State: "on"}} }), `services[0].state: must be online, offline or cleanup, got "on"`},
		{"structure access id", structure(func(s *Structure) { s.Access = []int64{90000001, 0} }), "access[1]: must be a positive character id, got 0"},
		{"structure without name", structure(func(s *Structure) { s.Name = "  " }), "name: missing or empty"},
		{"structure without system", structure(func(s *Structure) { s.SystemID = 0 }), "type_id, corporation_id and system_id must be positive integers"},
		{"structure id", structure(func(s *Structure) { s.ID = -5 }), "id: must be a positive integer, got -5"},

		// Named records.
		{"entity without name", &Region{Entity: Entity{ID: 1}}, "name: missing or empty"},
		{"entity id 0", &Region{Entity: Entity{Name: "x"}}, "id: must be a positive integer, got 0"},
		{"unknown language", &Type{Entity: Entity{ID: 34, Name: "Tritanium", Names: Localized{"it": "Tritanio"}}, GroupID: 18}, `names: unknown language "it"`},
		{"empty localized name", &Type{Entity: Entity{ID: 34, Name: "Tritanium", Names: Localized{"ja": " "}}, GroupID: 18}, "names.ja: empty"},
		{"type description language", &Type{Entity: Entity{ID: 34, Name: "Tritanium"}, GroupID: 18, Descriptions: Localized{"xx": "?"}}, `descriptions: unknown language "xx"`},
		{"type without group", &Type{Entity: Entity{ID: 34, Name: "Tritanium"}}, "group_id: must be a positive integer, got 0"},
		{"type with a category", &Type{Entity: Entity{ID: 34, Name: "Tritanium"}, GroupID: 18, CategoryID: 4}, ""},
		{"type with a negative category", &Type{Entity: Entity{ID: 34, Name: "Tritanium"}, GroupID: 18, CategoryID: -1}, "category_id: must be a positive integer when present, got -1"},
		{"character without corporation", &Character{Entity: Entity{ID: 90000001, Name: "A"}}, "corporation_id: must be a positive integer, got 0"},
		{"character gender", &Character{Entity: Entity{ID: 90000001, Name: "A"}, CorporationID: 1, Gender: "other"}, `gender: must be male or female, got "other"`},
		{"character valid", &Character{Entity: Entity{ID: 90000001, Name: "A"}, CorporationID: 1, Gender: "male"}, ""},
		{"alliance without ticker", &Alliance{Entity: Entity{ID: 99000001, Name: "A"}}, "ticker: missing"},
		{"corporation tax rate", &Corporation{Entity: Entity{ID: 98000001, Name: "C"}, TaxRate: 1.5}, "tax_rate: must be between 0 and 1, got 1.5"},
		{"faction descriptions", &Faction{Entity: Entity{ID: 500001, Name: "F"}, Descriptions: Localized{"de": ""}}, "descriptions.de: empty"},
		{"solar system without constellation", &SolarSystem{Entity: Entity{ID: 30000142, Name: "Jita"}}, "constellation_id: must be a positive integer, got 0"},
		{"station without system", &Station{Entity: Entity{ID: 60003760, Name: "S"}, StationDetails: StationDetails{TypeID: 1}}, "system_id: must be a positive integer, got 0"},
		{"station without type", &Station{Entity: Entity{ID: 60003760, Name: "S"}, StationDetails: StationDetails{SystemID: 1}}, "type_id: must be a positive integer, got 0"},

		// Roles and documents.
		{"roles valid", &CharacterRoles{CharacterID: 1, CorporationID: 2, Roles: []string{RoleStationManager}}, ""},
		{"roles empty role", &CharacterRoles{CharacterID: 1, CorporationID: 2, Roles: []string{""}}, "roles[0]: empty"},
		{"roles without corporation", &CharacterRoles{CharacterID: 1}, "corporation_id: must be a positive integer, got 0"},
		{"document path", &Document{Seq: 1, Path: "/characters/1/bookmarks", Body: json.RawMessage(`[]`)}, "path: must start and end with '/'"},
		{"document body", &Document{Seq: 1, Path: "/x/", Body: json.RawMessage(`{`)}, "body: missing or not valid JSON"},
		{"document seq", &Document{Path: "/x/", Body: json.RawMessage(`[]`)}, "seq: must be a positive integer, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rec.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want valid", err)
			case tt.want != "" && err == nil:
				t.Errorf("Validate = nil, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("Validate = %q, want %q", err, tt.want)
			}
		})
	}
}

func TestKinds(t *testing.T) {
	for _, k := range Kinds {
		if k.New() == nil {
			t.Errorf("%s: New returns nil", k)
		}
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("ships"); err == nil {
		t.Error("ParseKind accepted an unknown kind")
	}
	for _, c := range Categories {
		if !c.Valid() || !c.Kind().Searchable() {
			t.Errorf("category %s: kind %q", c, c.Kind())
		}
		if _, ok := c.Kind().New().(Named); !ok {
			t.Errorf("category %s: records are not Named", c)
		}
	}
	if Roles.Searchable() || Documents.Searchable() || Category("ship").Valid() {
		t.Error("roles, documents or an unknown category count as searchable")
	}
}
