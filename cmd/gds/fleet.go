package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"gds/api/admin"
	"gds/indexer"
	"gds/indexer/fleet"
)

// fleetConfig is how a process takes part in a fleet: an indexer publishes
// to a bucket, a replica follows one (docs/fleet.md).
type fleetConfig struct {
	Publish        string
	PublishKeep    int
	Follow         string
	FollowInterval time.Duration
}

// publishRetry is how often a publisher whose last publish failed tries
// again (a new build tries at once).
const publishRetry = time.Minute

// addPublishFlags declares --publish and --publish-keep on fs.
func addPublishFlags(fs *flag.FlagSet, c *fleetConfig) {
	fs.StringVar(&c.Publish, "publish", "", "after a generation goes live, upload it to this bucket URL (s3://, gs://, azblob://, file://) for replicas to --follow")
	fs.IntVar(&c.PublishKeep, "publish-keep", fleet.DefaultKeep, "generations the bucket keeps: one is deleted once this many newer ones are published")
}

// check refuses combinations that make no sense.
func (c fleetConfig) check(snapshot, schedule string) error {
	if c.PublishKeep < 1 {
		return fmt.Errorf("--publish-keep %d: want at least 1", c.PublishKeep)
	}
	for name, u := range map[string]string{"--publish": c.Publish, "--follow": c.Follow} {
		if u != "" && !fleet.IsURL(u) {
			return fmt.Errorf("%s %q: want a bucket URL such as s3://bucket?region=eu-west-1 or file:///srv/gds-bucket", name, u)
		}
	}
	if c.Follow == "" {
		return nil
	}
	switch {
	case c.Publish != "":
		return errors.New("--follow and --publish exclude each other: a replica publishes nothing")
	case snapshot != "" || schedule != "":
		return errors.New("--follow builds nothing: drop --snapshot and --schedule")
	case c.FollowInterval <= 0:
		return fmt.Errorf("--follow-interval %v: want a positive duration", c.FollowInterval)
	}
	return nil
}

// fetchSnapshot lets the indexer build from a snapshot in a bucket,
// downloaded into the data directory.
func fetchSnapshot(data string) func(context.Context, string) (string, error) {
	f := &fleet.SnapshotFetcher{Dir: filepath.Join(data, "fleet", "snapshot")}
	return f.Fetch
}

// fleetRun is a running publisher or follower.
type fleetRun struct {
	pub      *fleet.Publisher
	follower *fleet.Follower
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// openPublisher opens the --publish bucket, if any (before the indexer, so
// builds can tell it).
func openPublisher(ctx context.Context, c fleetConfig, log zerolog.Logger) (*fleetRun, error) {
	fr := &fleetRun{cancel: func() {}}
	if c.Publish == "" {
		return fr, nil
	}
	pub, err := fleet.NewPublisher(ctx, c.Publish, c.PublishKeep, log.With().Str("component", "publish").Logger())
	if err != nil {
		return nil, fmt.Errorf("--publish: %w", err)
	}
	fr.pub = pub
	return fr, nil
}

// onBuild tells the publisher of every generation a build made live.
func (fr *fleetRun) onBuild(next func(indexer.BuildResult)) func(indexer.BuildResult) {
	if fr.pub == nil {
		return next
	}
	return func(r indexer.BuildResult) {
		next(r)
		if r.OK() && r.Generation != 0 {
			fr.pub.Kick()
		}
	}
}

// start runs the publisher or the follower in the background until stop.
func (fr *fleetRun) start(ctx context.Context, c fleetConfig, data string, mgr *indexer.Manager, metrics *admin.Metrics, log zerolog.Logger) error {
	ctx, fr.cancel = context.WithCancel(ctx)
	if fr.pub != nil {
		mgr.ReserveIDs(fr.pub.Published())
		fr.wg.Add(1)
		go func() { defer fr.wg.Done(); fr.pub.Run(ctx, mgr, publishRetry) }()
	}
	if c.Follow != "" {
		f, err := fleet.NewFollower(ctx, c.Follow, data, mgr, c.FollowInterval, log.With().Str("component", "follow").Logger())
		if err != nil {
			return fmt.Errorf("--follow: %w", err)
		}
		fr.follower = f
		fr.wg.Add(1)
		go func() { defer fr.wg.Done(); f.Run(ctx) }()
	}
	if fr.active() {
		metrics.Register(&fleet.Collector{Publisher: fr.pub, Follower: fr.follower})
	}
	return nil
}

func (fr *fleetRun) active() bool { return fr.pub != nil || fr.follower != nil }

// status is the "fleet" section of /admin/status.
func (fr *fleetRun) status() any {
	return (&fleet.Collector{Publisher: fr.pub, Follower: fr.follower}).Status()
}

// stop ends the background work and closes the buckets.
func (fr *fleetRun) stop() {
	fr.cancel()
	fr.wg.Wait()
	if fr.pub != nil {
		fr.pub.Close()
	}
	if fr.follower != nil {
		fr.follower.Close()
	}
}

// waitForLive waits until a generation is live (a replica's first
// download) or ctx ends.
func waitForLive(ctx context.Context, mgr *indexer.Manager) bool {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for mgr.Live() == nil {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}
