package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"gds/snapshots"
	"gds/snapshots/reinforce"
)

func init() {
	register("structures", "show a corporation's structures with power mode and next reinforcement windows", runStructures)
}

// runStructures prints each structure of a corporation with what clients
// derive from the list (docs/api.md, Corporation structures): its power mode, the
// reinforcement cycles that mode gives, and the next windows in which a
// first and a final reinforcement can end. It reads the snapshot directly,
// so it answers for any moment (--now) without a server.
func runStructures(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "structures", "--snapshot DIR --corporation ID [--now RFC3339] [--json]")
	snapshot := fs.String("snapshot", "", "snapshot directory to read")
	corporation := fs.Int64("corporation", 0, "corporation ID whose structures to show")
	nowFlag := fs.String("now", "", "moment to compute windows for, RFC 3339 (default: the current time)")
	asJSON := fs.Bool("json", false, "print JSON, one object per structure in an array")
	err := parseOnlyFlags(env, fs, args)
	if err != nil {
		return err
	}
	if err := requireFlags(fs, "snapshot"); err != nil {
		return err
	}
	if *corporation <= 0 {
		return errors.New("structures: --corporation must be a positive corporation ID")
	}
	now := time.Now().UTC()
	if *nowFlag != "" {
		if now, err = time.Parse(time.RFC3339, *nowFlag); err != nil {
			return fmt.Errorf("structures: --now: %w", err)
		}
	}
	snap, err := snapshots.Open(*snapshot)
	if err != nil {
		return fmt.Errorf("structures: %w", err)
	}
	reports, err := corporationStructures(ctx, snap, *corporation, now.UTC())
	if err != nil {
		return fmt.Errorf("structures: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	return printStructures(env.Stdout, *corporation, now.UTC(), reports)
}

// structureReport is what gds structures says of one structure.
type structureReport struct {
	StructureID int64     `json:"structure_id"`
	Name        string    `json:"name"`
	State       string    `json:"state"`
	PowerMode   string    `json:"power_mode"`
	Cycles      []string  `json:"reinforce_cycles"`
	Schedule    schedule  `json:"schedule"`
	Pending     *pending  `json:"pending_change,omitempty"`
	FirstExit   windowOut `json:"first_exit"`
	FinalExit   windowOut `json:"final_exit"`
}

type schedule struct {
	Weekday int    `json:"reinforce_weekday"`
	Hour    int    `json:"reinforce_hour"`
	Day     string `json:"day"`
}

type pending struct {
	schedule
	Apply time.Time `json:"apply"`
}

type windowOut struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

func scheduleOf(s reinforce.Schedule) schedule {
	return schedule{Weekday: s.Weekday, Hour: s.Hour, Day: reinforce.GoWeekday(s.Weekday).String()}
}

// corporationStructures streams the snapshot's structures and reports
// those corporation owns, in ID order.
func corporationStructures(ctx context.Context, snap *snapshots.Snapshot, corporation int64, now time.Time) ([]structureReport, error) {
	reports := []structureReport{}
	err := snap.Each(snapshots.Structures, func(rec snapshots.Record, _ snapshots.Line) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		st := rec.(*snapshots.Structure)
		if st.CorporationID != corporation {
			return nil
		}
		r, err := reportStructure(st, now)
		if err != nil {
			return err
		}
		reports = append(reports, r)
		return nil
	})
	return reports, err
}

func reportStructure(st *snapshots.Structure, now time.Time) (structureReport, error) {
	w, err := reinforce.NextWindows(st, now)
	if err != nil {
		return structureReport{}, err
	}
	mode := reinforce.PowerMode(st.Services)
	r := structureReport{
		StructureID: st.ID, Name: st.Name, State: st.State, PowerMode: mode.String(),
		Schedule:  scheduleOf(reinforce.Current(st)),
		FirstExit: windowOut(w.FirstExit), FinalExit: windowOut(w.FinalExit),
	}
	for _, c := range reinforce.Cycles(mode) {
		r.Cycles = append(r.Cycles, c.State)
	}
	if sch, apply, ok := reinforce.Requested(st); ok {
		r.Pending = &pending{schedule: scheduleOf(sch), Apply: apply}
	}
	return r, nil
}

// printStructures writes the reports as a table for people.
func printStructures(w io.Writer, corporation int64, now time.Time, reports []structureReport) error {
	if len(reports) == 0 {
		_, err := fmt.Fprintf(w, "corporation %d has no structures in the snapshot\n", corporation)
		return err
	}
	fmt.Fprintf(w, "corporation %d, %d structures, windows as of %s (UTC)\n\n", corporation, len(reports), now.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tPOWER\tCYCLES\tSCHEDULE\tNEXT FIRST EXIT\tNEXT FINAL EXIT\tPENDING CHANGE")
	for _, r := range reports {
		change := "-"
		if r.Pending != nil {
			change = fmt.Sprintf("%s %02d:00 from %s", r.Pending.Day, r.Pending.Hour, r.Pending.Apply.Format(time.RFC3339))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s %02d:00\t%s\t%s\t%s\n",
			r.StructureID, r.Name, r.State, r.PowerMode, strings.Join(r.Cycles, ">"),
			r.Schedule.Day, r.Schedule.Hour, span(r.FirstExit), span(r.FinalExit), change)
	}
	return tw.Flush()
}

func span(w windowOut) string {
	return w.Start.Format("Mon 2006-01-02 15:04") + "–" + w.End.Format("15:04")
}
