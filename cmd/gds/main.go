// Command gds is the Game Data Service: one binary whose subcommands import
// and generate snapshots, build indexes, serve the HTTP interface, and help
// operators and analysts. This package only wires the other packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "gds:", err)
		}
		os.Exit(exitCode(err))
	}
}

// errUsage marks errors whose message has already been printed as usage.
var errUsage = errors.New("usage")

// errHelp is a subcommand's -h/--help: its usage is printed and the program
// succeeds.
var errHelp = errors.New("help")

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

// Env is what a subcommand may touch of the outside world, so the whole
// program runs in-process in tests.
type Env struct {
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

var commands = map[string]command{}

// register adds a subcommand; each lives in its own file.
func register(name, summary string, run func(ctx context.Context, env *Env, args []string) error) {
	commands[name] = command{name: name, summary: summary, run: run}
}

// run is the whole program: main only supplies the process's environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	env := &Env{Getenv: getenv, Stdout: stdout, Stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gds: unknown command %q\n\n", args[0])
		usage(stderr)
		return errUsage
	}
	if err := cmd.run(ctx, env, args[1:]); !errors.Is(err, errHelp) {
		return err
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gds <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'gds <command> -h' for the flags of a command. Every flag can also be set")
	fmt.Fprintln(w, "by an environment variable: --release-day is GDS_RELEASE_DAY, and so on.")
}

// newFlags returns a flag set for a subcommand that writes its usage to
// the command's stderr.
func newFlags(env *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: gds %s %s\n\nflags (each also read from GDS_<FLAG>):\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, allowing positional arguments between flags
// (gds import-sde SDE_DIR --out DIR), then fills every flag not given on
// the command line from its environment variable GDS_<NAME>.
func parseFlags(env *Env, fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, errUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		key := EnvName(f.Name)
		if v := env.Getenv(key); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", key, v, e)
			}
		}
	})
	return positional, err
}

// parseOnlyFlags is parseFlags for a command that takes no positional
// arguments: one is an error naming it.
func parseOnlyFlags(env *Env, fs *flag.FlagSet, args []string) error {
	positional, err := parseFlags(env, fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), positional[0])
	}
	return nil
}

// requireFlags is nil when each named flag of fs has a value, else the
// error naming them all and the variables that can stand in for them:
// "index: --snapshot and --data are required (or GDS_SNAPSHOT, GDS_DATA)".
func requireFlags(fs *flag.FlagSet, names ...string) error {
	missing := false
	flags := make([]string, len(names))
	vars := make([]string, len(names))
	for i, name := range names {
		missing = missing || fs.Lookup(name).Value.String() == ""
		flags[i], vars[i] = "--"+name, EnvName(name)
	}
	if !missing {
		return nil
	}
	verb := "is"
	if len(names) > 1 {
		verb = "are"
	}
	return fmt.Errorf("%s: %s %s required (or %s)", fs.Name(), strings.Join(flags, " and "), verb, strings.Join(vars, ", "))
}

// EnvName is the environment variable read for a flag: GDS_ and the flag's
// name in upper case with '-' as '_'.
func EnvName(flagName string) string {
	return "GDS_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}
