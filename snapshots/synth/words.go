package synth

// Word lists for names. They imitate the four empires' naming styles
// (Caldari: Japanese and Finnish; Minmatar: Nordic; Amarr: Arabic and
// Hebrew; Gallente: French) so searches behave as on real data: shared
// prefixes, apostrophes, hyphens, repeated surnames.

// culture indexes the lists below and matches a race.
type culture int

const (
	caldari culture = iota
	minmatar
	amarr
	gallente
	numCultures
)

// Race and bloodline IDs of the SDE (chrRaces, chrBloodlines), per culture.
var (
	raceIDs      = [numCultures]int64{caldari: 1, minmatar: 2, amarr: 4, gallente: 8}
	bloodlineIDs = [numCultures][]int64{
		caldari:  {1, 2, 11}, // Deteis, Civire, Achura
		minmatar: {3, 4, 14}, // Sebiestor, Brutor, Vherokior
		amarr:    {5, 6, 13}, // Amarr, Ni-Kunni, Khanid
		gallente: {7, 8, 12}, // Gallente, Intaki, Jin-Mei
	}
)

var firstNames = [numCultures][]string{
	caldari: {
		"Aiko", "Akemi", "Aino", "Aleksi", "Ayane", "Daisuke", "Eero", "Emiko", "Hanna", "Haru",
		"Haruki", "Hiroshi", "Ilmari", "Isamu", "Juha", "Junko", "Kaisa", "Kaito", "Kalle", "Kaori",
		"Kazuo", "Kenji", "Kiri", "Lauri", "Masaru", "Mikko", "Misaki", "Mitsuo", "Naomi", "Niina",
		"Noriko", "Oskari", "Otsu", "Pekka", "Ren", "Rin", "Ryo", "Saara", "Sakura", "Satoshi",
		"Sora", "Takeshi", "Tarja", "Tomoe", "Tuula", "Ukko", "Veikko", "Yoshiro", "Yuki", "Ka-Ren",
		"Tibus", "Otro", "Haatu", "Aiki", "Kirjuun", "Mens", "Janus", "Tashi", "Vaari", "Okko",
	},
	minmatar: {
		"Anna", "Asgeir", "Astrid", "Bera", "Bjorn", "Brynja", "Dagny", "Einar", "Eirik", "Freya",
		"Grettir", "Gunnar", "Hakon", "Halvard", "Helga", "Ingrid", "Ivar", "Jorunn", "Karin", "Ketil",
		"Kjartan", "Leif", "Liv", "Magnus", "Njal", "Olaf", "Orm", "Ragnar", "Ragnhild", "Runa",
		"Signy", "Sigrid", "Solveig", "Sven", "Thora", "Torvald", "Tyr", "Ulf", "Vidar", "Yrsa",
		"Maleatu", "Keitan", "Ris-Ken", "Karishal", "Drupar", "Midular", "Jarl", "Arnulf", "Sif", "Oddny",
	},
	amarr: {
		"Ahmad", "Amina", "Ari", "Aziz", "Basim", "Bilal", "Dalia", "Eliah", "Ezra", "Faisal",
		"Farid", "Hadi", "Hana", "Ibrahim", "Idris", "Jamila", "Karim", "Khalil", "Layla", "Levi",
		"Malik", "Mariam", "Miriam", "Nadia", "Nasser", "Noam", "Omar", "Rania", "Rashid", "Raziel",
		"Salim", "Samira", "Sarai", "Tamar", "Tariq", "Yael", "Yasmin", "Yusuf", "Zahra", "Zaid",
		"Jamyl", "Dochuta", "Merimeth", "Aritcio", "Uriam", "Catiz", "Yonis", "Arkon", "Hadeel", "Idra",
	},
	gallente: {
		"Adrien", "Aline", "Anne-Sophie", "Antoine", "Bastien", "Camille", "Celine", "Chloe", "Claude", "Damien",
		"Elise", "Etienne", "Fabien", "Gaspard", "Helene", "Isabelle", "Jacques", "Jean-Luc", "Julien", "Louis",
		"Lucien", "Manon", "Margaux", "Marie-Claire", "Mathis", "Nicolas", "Odile", "Pascal", "Quentin", "Remy",
		"Renee", "Solene", "Sylvie", "Thierry", "Valerie", "Vincent", "Yves", "Zoe", "Souro", "Foiritan",
		"Aulus", "Mentas", "Jacus", "Roden", "Ashterthan", "Celes", "Oveur", "Siobhan", "Liam", "Maeve",
	},
}

var lastNames = [numCultures][]string{
	caldari: {
		"Ahonen", "Aikanen", "Fujiwara", "Haatakan", "Hakaari", "Hayashi", "Heikkinen", "Hirano", "Ichikawa", "Iwata",
		"Kanerva", "Kawasaki", "Kiljunen", "Kimura", "Kobayashi", "Korhonen", "Kuroda", "Laakso", "Lahtinen", "Matsuda",
		"Miyazaki", "Murakami", "Nakamura", "Nishida", "Ogawa", "Okabe", "Otsela", "Pesonen", "Rautio", "Saarinen",
		"Sato", "Shimizu", "Soini", "Takahashi", "Tanaka", "Tervo", "Tsukuro", "Ueda", "Uotila", "Veikkola",
		"Virtanen", "Vittanen", "Vuorinen", "Watanabe", "Yamada", "Yoshida", "Kaalakiota", "Ishukone", "Nugoeihuvi", "Sukuuvestaa",
		"Kurvola", "Kusanagi", "Ohaya", "Nagato", "Tokhar",
	},
	minmatar: {
		"Aasen", "Andersen", "Berg", "Bjornsson", "Dahl", "Eriksdottir", "Fjeld", "Gudmundsson", "Halvorsen", "Hansen",
		"Haugen", "Holm", "Johansson", "Karlsen", "Larsen", "Lund", "Magnusson", "Moen", "Nilsen", "Nygaard",
		"Olsen", "Pedersen", "Ragnarsson", "Sigurdsson", "Strand", "Thorsen", "Tveit", "Ulfsdottir", "Vik", "Shakor",
		"Krusual", "Sebiestor", "Brutor", "Vherokior", "Thukker", "Stormcrow", "Ironhand", "Redfield", "Starkmanir", "Nefantar",
		"O'mally", "Ka-Ren", "Ostgard", "Skarsgard", "Vindsval",
	},
	amarr: {
		"Abadi", "Al-Rashid", "Ardishapur", "Avraham", "Bakr", "Ben-Ami", "Cohen", "Dahan", "Darwish", "Farouk",
		"Haddad", "Hakim", "Issa", "Jaber", "Kador", "Kassab", "Khanid", "Kor-Azor", "Levin", "Malouf",
		"Mansour", "Mizrahi", "Nader", "Nassar", "Othman", "Peretz", "Qadir", "Rahal", "Sabbagh", "Saleh",
		"Sarum", "Shadid", "Shalev", "Tahan", "Tash-Murkon", "Yousef", "Zayed", "Al'Hakim", "Da'Vin", "Ibn Qasim",
		"Karsoth", "Ardia", "Hezrat", "Anzalaisis", "Zaib",
	},
	gallente: {
		"Arceneaux", "Beaumont", "Belmont", "Blanchard", "Bonnet", "Boucher", "Cartier", "Chevalier", "D'Amour", "D'Arcy",
		"Delacroix", "Deschamps", "DeVille", "Dubois", "Dupont", "Duvolle", "Fontaine", "Fournier", "Gauthier", "Girard",
		"Lambert", "Laurent", "LeBlanc", "Lefebvre", "Lemaire", "Marchand", "Mercier", "Montclair", "Moreau", "Perrin",
		"Renaud", "Roden", "Rousseau", "Saint-Clair", "Thibault", "Vaillancourt", "Vasseur", "Villeneuve", "O'Connell", "MacAllister",
		"Luminaire", "Aidonis", "Tallen", "Vanderbilt", "Cerilis",
	},
}

// handleParts build one-word pilot names and gamer tags ("Voidwolf",
// "xXDarkstar99Xx").
var handleParts = []string{
	"Dark", "Star", "Void", "Shadow", "Iron", "Nova", "Wolf", "Blade", "Storm", "Rift",
	"Frost", "Ghost", "Raven", "Vex", "Krios", "Zeal", "Mind", "Fang", "Hawk", "Viper",
	"Ember", "Pulse", "Warp", "Drone", "Salvage", "Miner", "Pilot", "Rogue", "Hunter", "Spark",
	"Nebula", "Comet", "Titan", "Capsuleer", "Scout", "Bandit", "Drake", "Rifter", "Orca", "Venture",
}

// unicodeFirst and unicodeLast are the few names outside ASCII, picked to
// exercise case folding: ß folds to ss, final sigma, dotted İ, ligatures.
var (
	unicodeFirst = []string{"Jürgen", "Zoë", "Søren", "Łukasz", "Ærin", "Björk", "Ἀλέξανδρος", "Δημήτρης", "Дмитрий", "Анна", "İlkay", "Ñuño", "Émile", "Œdipe"}
	unicodeLast  = []string{"Straße", "Müller", "Lefèvre", "Åström", "Groß", "Παππάς", "ΟΔΥΣΣΕΑΣ", "Волков", "Соколова", "Çelik", "Núñez", "Dvořák", "Ødegård"}
)

// Corporation and alliance name parts.
var (
	orgAdjectives = []string{
		"Deep", "Black", "Red", "Iron", "Silent", "Stellar", "Void", "Blue", "Crimson", "Frozen",
		"Outer", "Northern", "Eastern", "Dark", "Golden", "Hidden", "Lost", "Wild", "Burning", "Quantum",
		"Brave", "Free", "Sovereign", "Eternal", "Shattered", "Fallen", "Rising", "Savage", "Imperial", "Rogue",
		"Nocturnal", "Solar", "Lunar", "Distant", "Ancient", "Hollow", "Radiant", "Obsidian", "Scarlet", "Cobalt",
	}
	orgNouns = []string{
		"Core Mining", "Rise", "Star", "Fleet", "Legion", "Horizon", "Dawn", "Flame", "Dragons", "Wolves",
		"Cartel", "Syndicate", "Order", "Rangers", "Raiders", "Miners", "Engineering", "Research", "Explorers", "Logistics",
		"Salvage", "Haulers", "Vanguard", "Sentinels", "Nomads", "Reapers", "Lancers", "Forge", "Tide", "Expanse",
		"Armada", "Outlaws", "Pioneers", "Harvesters", "Wardens", "Corsairs", "Vultures", "Covenant", "Shipyards", "Refinery",
	}
	corpSuffixes     = []string{"Inc.", "Corp.", "Corporation", "Industries", "LLC", "Ltd.", "Holdings", "Enterprises", "Group", "and Co.", "", "", ""}
	allianceSuffixes = []string{"Alliance", "Collective", "Coalition", "Federation", "Empire", "Confederation", "Union", "Directorate", "Consortium", "Pact", "Initiative", "Horde", "", ""}
)

// Structure name words, after "<System> - ".
var structureWords = []string{
	"Caldari Freeport", "Trade Hub", "Staging", "Home", "Fortress", "Market", "Refinery", "Ore Processing",
	"Research Lab", "Mining Outpost", "Manufacturing Hub", "Safe Harbour", "Bastion", "Moon Drill", "Reaction Farm",
	"Citadel", "Capital Yard", "Clone Vat", "Sanctuary", "Watchtower", "Logistics Depot", "Freeport", "HQ", "Keep",
}

// Upwell structure types (SDE type IDs) with how common each is, in
// thousandths, and the services each class may run.
type structureType struct {
	id       int64
	weight   int
	services []string
}

var (
	citadelServices     = []string{"Clone Bay", "Market", "Manufacturing (Standard Ships)", "Material Efficiency Research", "Time Efficiency Research", "Blueprint Copying", "Invention", "Reprocessing"}
	engineeringServices = []string{"Manufacturing (Standard Ships)", "Material Efficiency Research", "Time Efficiency Research", "Blueprint Copying", "Invention", "Clone Bay"}
	refineryServices    = []string{"Reprocessing", "Moon Drilling", "Composite Reactions", "Biochemical Reactions", "Hybrid Reactions", "Clone Bay"}

	structureTypes = []structureType{
		{35832, 350, citadelServices},     // Astrahus
		{35833, 100, citadelServices},     // Fortizar
		{35834, 30, citadelServices},      // Keepstar
		{35825, 200, engineeringServices}, // Raitaru
		{35826, 70, append([]string{"Manufacturing (Capitals)"}, engineeringServices...)},                                   // Azbel
		{35827, 40, append([]string{"Manufacturing (Capitals)", "Manufacturing (Super Capitals)"}, engineeringServices...)}, // Sotiyo
		{35835, 150, refineryServices}, // Athanor
		{35836, 60, refineryServices},  // Tatara
	}
)

// builtinSystem is a real solar system, used when no base snapshot gives
// the universe.
type builtinSystem struct {
	id   int64
	name string
}

var builtinSystems = []builtinSystem{
	{30000119, "Isikemi"},
	{30000142, "Jita"},
	{30000144, "Perimeter"},
	{30002053, "Hek"},
	{30002187, "Amarr"},
	{30002510, "Rens"},
	{30002537, "Amamake"},
	{30002659, "Dodixie"},
	{30002813, "Tama"},
	{30003067, "Huola"},
	{30004759, "1DQ1-A"},
}

// The corporation roles of ESI's /characters/{id}/roles/ besides
// Station_Manager and Director, which are handed out separately.
var otherRoles = []string{
	"Accountant", "Auditor", "Communications_Officer", "Config_Equipment", "Config_Starbase_Equipment",
	"Contract_Manager", "Diplomat", "Factory_Manager", "Fitting_Manager", "Junior_Accountant",
	"Personnel_Manager", "Rent_Factory_Facility", "Rent_Office", "Rent_Research_Facility", "Security_Officer",
	"Starbase_Defense_Operator", "Starbase_Fuel_Technician", "Trader", "Hangar_Query_1", "Hangar_Take_1",
	"Container_Take_1", "Account_Take_1",
}

// Short biographies, used sparingly.
var descriptions = []string{
	"Mining is life.", "Fly safe o7", "Recruiting! Contact me in game.", "Not a spy.",
	"Industrialist and part-time explorer.", "Will haul for ISK.", "Wormhole dweller.", "Null-sec or bust.",
}

// Syllables for made-up surnames in each empire's style: the fixed lists
// alone would repeat names far more often than the game does.
var surnameSyllables = [numCultures][3][]string{
	caldari: {
		{"Ka", "Ha", "Ta", "Ku", "Mi", "Sa", "Ve", "Ai", "Ito", "Oka", "Nu", "Ri", "Tsu", "Yo", "Ki", "Hei", "Laa", "Pa", "Su", "Ya"},
		{"", "ka", "ra", "to", "mi", "ki", "ya", "nu", "se", "ri", "ta", "vo"},
		{"nen", "moto", "hara", "kawa", "lainen", "la", "saki", "mura", "kari", "da", "ta", "niemi", "oja", "kone"},
	},
	minmatar: {
		{"Bjor", "Ey", "Gun", "Hal", "Ing", "Kol", "Mag", "Rag", "Sig", "Thor", "Ulf", "Vig", "Sten", "Arn", "Dag", "Frey", "Hild", "Jor", "Sol", "Tor"},
		{"", "a", "e", "i", "o", "ar", "ul", "en"},
		{"sen", "son", "dottir", "strand", "vik", "berg", "dal", "holm", "lund", "gard", "stad", "heim", "fjord", "mark"},
	},
	amarr: {
		{"Qas", "Nas", "Far", "Rah", "Mal", "Sar", "Kad", "Har", "Zay", "Tah", "Jab", "Sab", "Ard", "Khal", "Mur", "Shap", "Az", "Bak", "Dar", "Yis"},
		{"", "a", "i", "u", "el", "am", "or", "is"},
		{"ir", "ar", "im", "ah", "id", "oun", "ani", "iri", "ath", "ous", "esh", "ai", "on", "ek"},
	},
	gallente: {
		{"Beau", "Mont", "Ville", "Du", "De", "La", "Le", "Fon", "Mar", "Ger", "Roch", "Bel", "Val", "Cha", "Ro", "Ver", "Bon", "Gra", "Lam", "Tes"},
		{"", "ri", "la", "ve", "no", "ci", "ma", "sa"},
		{"champ", "clair", "fort", "mont", "neuve", "bois", "reau", "lieu", "vert", "tier", "ard", "ville", "chet", "mard"},
	},
}
