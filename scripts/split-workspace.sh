#!/usr/bin/env bash
# Split the single `tdn-tui` crate into a Cargo workspace:
#
#   crates/tdn-core         src/analysis    (run model, load, import, detect, links, rank, claims,
#                                            influence, report, eval, ...; no tokio/ratatui/crossterm)
#   crates/tdn-experiments  src/experiments + src/config  (runner, verdicts, ledger; settings)
#   .  (tdn-tui)            src/tui, src/cli, src/main.rs, src/lib.rs, tests, benches, examples
#
# Module paths are kept: each member's lib.rs declares (or re-exports) `analysis`, `experiments`
# and `config` at its root, so `crate::analysis::...` and `tdn_tui::analysis::...` stay valid.
#
# Run at the top of a checkout (clean, or with only this split's own changes): it is idempotent,
# running it again changes nothing. It stages its changes (Cargo.lock included); afterwards run
# `.ci/run`, and commit.
#
# Usage: scripts/split-workspace.sh
set -euo pipefail

die() {
    echo "split-workspace: $*" >&2
    exit 1
}
note() { echo "split-workspace: $*" >&2; }

cd "$(git rev-parse --show-toplevel)"
grep -q '^name = "tdn-tui"' Cargo.toml || die "run me at the top of the tdn-tui repository"

CORE=crates/tdn-core
EXP=crates/tdn-experiments

# ---------------------------------------------------------------------------------------------
# 1. Move the files with `git mv`, one tracked file at a time, so files added to src/analysis,
#    src/experiments or src/config by anyone (before or after a first run) all follow.
# ---------------------------------------------------------------------------------------------
move_tree() {
    local from=$1 to=$2 f dest
    git ls-files -z -- "$from" | while IFS= read -r -d '' f; do
        dest="$to/${f#"$from"/}"
        mkdir -p "$(dirname "$dest")"
        git mv -k "$f" "$dest"
    done
    if [ -d "$from" ]; then
        find "$from" -depth -type d -empty -delete
        [ -d "$from" ] && note "left behind (untracked): $(find "$from" -type f | head -5 | tr '\n' ' ')"
    fi
    return 0
}
move_tree src/analysis "$CORE/src/analysis"
move_tree src/experiments "$EXP/src/experiments"
move_tree src/config "$EXP/src/config"

MOVED_RS=$(find "$CORE/src" "$EXP/src" -name '*.rs' | sort)

# ---------------------------------------------------------------------------------------------
# 2. Paths inside the moved code that point at the repository (fixtures, schemas, docs,
#    sample runs): the crates sit two directories deeper than the old crate.
#    a. `env!("CARGO_MANIFEST_DIR")` now names crates/<member>: add "/../..".
#    b. an `include_str!("../../../x")` (or include_bytes!) that climbs out of src/ (more `../`
#       than the file's depth below src/) gets two more `../`. One already fixed climbs exactly
#       depth+3 and is left alone.
# ---------------------------------------------------------------------------------------------
# shellcheck disable=SC2086
perl -0pi -e '
    s{env!\("CARGO_MANIFEST_DIR"\)(?!\s*,\s*"/\.\./\.\.")}{concat!(env!("CARGO_MANIFEST_DIR"), "/../..")}g;
    my ($depth) = ($ARGV =~ m{^crates/[^/]+/src/(.*)$});
    $depth = () = $depth =~ m{/}g;
    s{(include_(?:str|bytes)!\(\s*)"((?:\.\./)+)}{ my $n = length($2) / 3; ($n > $depth && $n < $depth + 3) ? "$1\"../../$2" : "$1\"$2" }ge;
' $MOVED_RS

# The analysis test doubles (RunBuilder, sample_runs) serve the tests of the crates above too:
# a `testutil` feature turns them on for those crates' tests.
perl -0pi -e 's{#\[cfg\(test\)\]\s*\n(\s*pub mod testutil;)}{#[cfg(any(test, feature = "testutil"))]\n$1}' \
    "$CORE/src/analysis/mod.rs"

# ---------------------------------------------------------------------------------------------
# 3. Items the old crate shared as `pub(crate)` and that are now used across a crate boundary.
#    Keyed on the item's declaration, not on line numbers.
# ---------------------------------------------------------------------------------------------
make_pub() { # FILE PERL-REGEX-OF-THE-DECLARATION-AFTER-pub(crate)
    local file=$1 decl=$2
    [ -f "$file" ] || { note "not found: $file"; return 0; }
    DECL=$decl perl -0pi -e 's{pub\(crate\)(\s+$ENV{DECL})}{pub$1}g' "$file"
}
# A new use across the boundary is a compile error ("is private"): add a line here.
make_pub "$CORE/src/analysis/model/mod.rs" 'mod json_string;'
make_pub "$CORE/src/analysis/model/json_string.rs" 'fn write_json_string\b'

# ---------------------------------------------------------------------------------------------
# 4. The members' lib.rs.
# ---------------------------------------------------------------------------------------------
cat >"$CORE/src/lib.rs" <<'EOF'
//! tdn-core: the analysis of an AI-agent run, as plain synchronous library code with no
//! terminal, process, async runtime or screen in it. See `docs/architecture.md`.

pub mod analysis;
EOF
cat >"$EXP/src/lib.rs" <<'EOF'
//! tdn-experiments: re-runs of the user's own agent through the command they configured, the
//! verdicts drawn from them and the attribution ledger ([`experiments`]), and the settings every
//! layer reads ([`config`]). Built on `tdn-core`, re-exported here as [`analysis`] so that paths
//! read the same in every crate. See `docs/architecture.md`.

pub use tdn_core::analysis;

pub mod config;
pub mod experiments;
EOF

# The root library keeps the same paths: `tdn_tui::analysis`, `tdn_tui::experiments`, ...
perl -pi -e '
    s{^pub mod analysis;}{pub use tdn_core::analysis;};
    s{^pub mod config;}{pub use tdn_experiments::config;};
    s{^pub mod experiments;}{pub use tdn_experiments::experiments;};
' src/lib.rs

# ---------------------------------------------------------------------------------------------
# 5. Manifests. Every dependency version stays in one place, `[workspace.dependencies]` (the old
#    `[dependencies]` and `[dev-dependencies]` lines, verbatim); each crate lists the ones its
#    code names (`name::`, `use name`), found by scanning its sources outside comments.
# ---------------------------------------------------------------------------------------------
if ! grep -q '^\[workspace\]' Cargo.toml; then
    perl -e '
        use strict; use warnings;
        my $core = shift; my $exp = shift;
        local $/; open my $fh, "<", "Cargo.toml" or die; my $toml = <$fh>; close $fh;

        # Cut the manifest into sections ([name, text]); keep comments with the entry below them.
        my @sections = (["", ""]);
        for my $line (split /^/, $toml) {
            if ($line =~ /^\[\[?([^\]]+)\]\]?\s*$/) { push @sections, [$1, $line]; next; }
            $sections[-1][1] .= $line;
        }
        my %body;
        for my $s (@sections) {
            die "split-workspace: [$s->[0]] tables are not handled\n" if $s->[0] =~ /^(dev-)?dependencies\./;
            $body{$s->[0]} = $s->[1] if $s->[0] =~ /^(package|dependencies|dev-dependencies)$/;
        }
        my @entries;    # [kind, name, text-with-comments]
        for my $kind ("dependencies", "dev-dependencies") {
            next unless exists $body{$kind};
            my $pending = "";
            for my $line (split /^/, $body{$kind}) {
                next if $line =~ /^\[/;
                if ($line =~ /^\s*#/) { $pending .= $line; next; }
                if ($line =~ /^\s*$/) { $pending = ""; next; }
                $line =~ /^([A-Za-z0-9_-]+)\s*=/ or die "split-workspace: cannot read $kind line: $line";
                push @entries, [$kind, $1, $pending . $line];
                $pending = "";
            }
        }

        # Which crate names which dependency. Comments and doc comments do not count.
        sub code_of {
            my $text = "";
            for my $dir (@_) {
                next unless -e $dir;
                for my $f (split /\n/, `find $dir -name "*.rs"`) {
                    open my $h, "<", $f or die; local $/; my $t = <$h>; close $h;
                    $t =~ s{^\s*//.*$}{}mg;
                    $text .= $t;
                }
            }
            return $text;
        }
        sub names {
            my ($code, $dep) = @_;
            (my $id = $dep) =~ s/-/_/g;
            return $code =~ /(?<![\w:])\Q$id\E(?:::|\s*;|\s+as\b|\s*\{|!)/;
        }
        my %code = (
            core => code_of("$core/src"),
            exp  => code_of("$exp/src"),
            root => code_of("src"),
            roottests => code_of("tests", "benches", "examples"),
        );

        my $ws = "[workspace]\n"
            . "# tdn-core <- tdn-experiments <- tdn-tui (the screen, the command line, the binary).\n"
            . "members = [\"$core\", \"$exp\"]\n"
            . "# `cargo build`, `cargo test` and `cargo clippy` at the top cover every crate.\n"
            . "default-members = [\".\", \"$core\", \"$exp\"]\n"
            . "resolver = \"3\"\n\n[workspace.package]\n";
        for my $k ("version", "edition", "rust-version", "license") {
            $body{"package"} =~ /^(\Q$k\E\s*=.*\n)/m and $ws .= $1;
        }
        $ws .= "\n[workspace.dependencies]\n"
            . "tdn-core = { path = \"$core\" }\n"
            . "tdn-experiments = { path = \"$exp\" }\n";
        $ws .= $_->[2] for grep { $_->[0] eq "dependencies" } @entries;
        $ws .= "# Tests and benchmarks only.\n";
        $ws .= $_->[2] for grep { $_->[0] eq "dev-dependencies" } @entries;

        sub dep_lines {
            my ($code, $kind, $extra) = @_;
            my $out = "";
            for my $e (@entries) {
                next unless $e->[0] eq $kind && names($code, $e->[1]);
                $out .= "$e->[1] = { workspace = true }\n";
            }
            return $out;
        }
        sub member {
            my ($name, $desc, $code, $deps, $features, $devdeps) = @_;
            my $t = "[package]\nname = \"$name\"\ndescription = \"$desc\"\n"
                . "version.workspace = true\nedition.workspace = true\n"
                . "rust-version.workspace = true\nlicense.workspace = true\npublish = false\n";
            $t .= "\n$features" if $features;
            $t .= "\n[dependencies]\n$deps";
            $t .= dep_lines($code, "dependencies");
            my $dev = $devdeps . dep_lines($code, "dev-dependencies");
            $t .= "\n[dev-dependencies]\n$dev" if $dev;
            return $t;
        }
        sub write_file { my ($p, $t) = @_; open my $h, ">", $p or die "$p: $!"; print $h $t; close $h; }

        # The test doubles may use test-only crates (proptest): optional, turned on by the feature.
        my $testutil = code_of("$core/src/analysis/testutil.rs", "$core/src/analysis/testutil");
        my @optional = map { $_->[1] } grep { $_->[0] eq "dev-dependencies" && names($testutil, $_->[1]) } @entries;
        write_file("$core/Cargo.toml", member("tdn-core",
            "The analysis of an AI-agent run: model, loaders, importers, detectors, links, ranking, claims, influence, the report",
            $code{core}, join("", map { "$_ = { workspace = true, optional = true }\n" } @optional),
            "[features]\n# The test doubles of `analysis::testutil`, for the tests of the crates built on this one.\n"
            . "testutil = [" . join(", ", map { "\"dep:$_\"" } @optional) . "]\n", ""));
        my $exp_dev = $code{exp} =~ /\btestutil\b/ ? "tdn-core = { workspace = true, features = [\"testutil\"] }\n" : "";
        write_file("$exp/Cargo.toml", member("tdn-experiments",
            "Re-runs of an agent through the user command, verdicts and the attribution ledger, on tdn-core",
            $code{exp}, "tdn-core = { workspace = true }\n", "", $exp_dev));

        # The root package: its own dependencies, the members, and the workspace tables.
        my $rootdeps = "[dependencies]\ntdn-core = { workspace = true }\ntdn-experiments = { workspace = true }\n";
        my $rootdev = "[dev-dependencies]\n";
        $rootdev .= "tdn-core = { workspace = true, features = [\"testutil\"] }\n"
            if ($code{root} . $code{roottests}) =~ /\btestutil\b/;
        for my $e (@entries) {
            my $line = "$e->[1] = { workspace = true }\n";
            if ($e->[0] eq "dependencies" && names($code{root}, $e->[1])) { $rootdeps .= $line; }
            elsif (names($code{root} . $code{roottests}, $e->[1])) { $rootdev .= $line; }
        }
        my $out = "";
        for my $s (@sections) {
            if ($s->[0] eq "dependencies") { $out .= "$rootdeps\n"; next; }
            if ($s->[0] eq "dev-dependencies") { $out .= "$rootdev\n"; next; }
            $out .= $s->[1];
        }
        $out =~ s/\n+\z/\n/;
        $out .= "\n$ws";
        write_file("Cargo.toml", $out);
    ' "$CORE" "$EXP"
fi

# ---------------------------------------------------------------------------------------------
# 6. The layering test: the compiler now refuses an arrow back up; the test checks what the
#    compiler cannot (manifests, printing, processes and environment inside the core).
# ---------------------------------------------------------------------------------------------
cat >tests/layering.rs <<'EOF'
//! The layers: `tdn-core` (the analysis) ← `tdn-experiments` (re-runs, ledger, settings) ←
//! `tdn-tui` (the screen, the command line, the binary). The compiler refuses an arrow back up: a
//! crate cannot name one built on it. These tests check what the compiler does not: that nothing
//! the core is built from (directly or through other crates, per `Cargo.lock`) is a terminal,
//! screen or async runtime crate, that the experiments pull in no screen, and that the core's code
//! starts no process, prints nothing and reads no environment variable.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read_toml(path: &str) -> toml::Table {
    let text = std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap();
    text.parse().unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The normal (not dev) dependencies a member's manifest lists, target-specific ones included.
fn direct_dependencies(manifest: &str) -> BTreeSet<String> {
    let table = read_toml(manifest);
    let mut names = BTreeSet::new();
    let mut add = |t: Option<&toml::Value>| {
        if let Some(deps) = t.and_then(|v| v.as_table()) {
            names.extend(deps.keys().cloned());
        }
    };
    add(table.get("dependencies"));
    if let Some(targets) = table.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            add(target.get("dependencies"));
        }
    }
    names
}

/// Every package `Cargo.lock` can pull in through `start`, by name (all versions together).
fn closure(start: &BTreeSet<String>) -> BTreeSet<String> {
    let lock = read_toml("Cargo.lock");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for package in lock["package"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_owned();
        let deps = package
            .get("dependencies")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str()?.split(' ').next().map(str::to_owned));
        edges.entry(name).or_default().extend(deps);
    }
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = start.iter().cloned().collect();
    while let Some(name) = todo.pop() {
        if seen.insert(name.clone()) {
            todo.extend(edges.get(&name).into_iter().flatten().cloned());
        }
    }
    seen
}

fn assert_none_of(crate_name: &str, manifest: &str, forbidden: &[&str]) {
    let direct = direct_dependencies(manifest);
    assert!(!direct.is_empty(), "{manifest} lists no dependencies");
    let all = closure(&direct);
    let found: Vec<&&str> = forbidden.iter().filter(|f| all.contains(**f)).collect();
    assert!(found.is_empty(), "{crate_name} is built from {found:?}");
}

#[test]
fn the_core_is_built_from_no_terminal_screen_or_runtime_crate() {
    assert_none_of(
        "tdn-core",
        "crates/tdn-core/Cargo.toml",
        &[
            "tokio",
            "ratatui",
            "crossterm",
            "futures-util",
            "tdn-experiments",
            "tdn-tui",
        ],
    );
}

#[test]
fn the_experiments_are_built_on_the_core_and_from_no_screen() {
    let direct = direct_dependencies("crates/tdn-experiments/Cargo.toml");
    assert!(direct.contains("tdn-core"), "tdn-experiments without tdn-core");
    assert_none_of(
        "tdn-experiments",
        "crates/tdn-experiments/Cargo.toml",
        &["ratatui", "crossterm", "tdn-tui"],
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What a dependency list cannot forbid: the standard library's processes, printing and
/// environment. The core takes its settings as arguments and reports through return values.
#[test]
fn the_core_starts_no_process_prints_nothing_and_reads_no_environment() {
    const FORBIDDEN: &[&str] = &[
        "std::process",
        "println!",
        "eprintln!",
        "print!(",
        "std::env::var",
    ];
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("crates/tdn-core/src"), &mut files);
    assert!(files.len() > 5, "crates/tdn-core/src looks empty");
    let mut offences = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for bad in FORBIDDEN {
                if code.contains(bad) {
                    offences.push(format!("{}:{}: {bad}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "layering broken:\n{}",
        offences.join("\n")
    );
}
EOF

# ---------------------------------------------------------------------------------------------
# 7. Docs: paths into the moved code, the README's description of the layers, the architecture.
# ---------------------------------------------------------------------------------------------
git ls-files -z -- '*.md' | xargs -0 perl -pi -e '
    s{(?<![\w/.-])src/analysis(?=[/`\s.,)]|$)}{crates/tdn-core/src/analysis}g;
    s{(?<![\w/.-])src/experiments(?=[/`\s.,)]|$)}{crates/tdn-experiments/src/experiments}g;
    s{(?<![\w/.-])src/config(?=[/`\s.,)]|$)}{crates/tdn-experiments/src/config}g;
'
# The README's paragraph on the layers (from "The code is" to the next blank line).
LAYERS=$(cat <<'EOF'
The code is a Cargo workspace in layers, each using only those before it, which the compiler
enforces: `crates/tdn-core` (the analysis: the run, loader, importers, detectors, links, ranking,
claims, influence, the report; synchronous, no terminal, process or async runtime),
`crates/tdn-experiments` (runner, verdicts, ledger, settings), and the top-level `tdn-tui` crate
with `tui` (the screen, which renders the report and computes nothing of its own) and `cli`. See
[architecture](docs/architecture.md).
EOF
)
LAYERS=$LAYERS perl -0pi -e '
    s{^The code is one crate in four layers.*?\n\n}{$ENV{LAYERS}\n\n}ms
        or (/docs\/architecture\.md/ or warn "split-workspace: README: layers paragraph not found, not updated\n");
' README.md
cat >docs/architecture.md <<'EOF'
# Architecture

tdn-tui is a Cargo workspace of three crates. Each uses only the ones before it, and the compiler
enforces it: a crate cannot name a crate that is built on it.

```
tdn-core  ←  tdn-experiments  ←  tdn-tui (library: tui, cli; the `tdn-tui` binary)
```

| Crate | Directory | Modules | May use |
|---|---|---|---|
| `tdn-core` | `crates/tdn-core` | `analysis::*` | serde, regex, rayon, sha2, ... (no tokio, ratatui, crossterm, no processes, no printing) |
| `tdn-experiments` | `crates/tdn-experiments` | `experiments::*`, `config` (and `analysis`, re-exported) | `tdn-core`, tokio, processes, files |
| `tdn-tui` | `.` (top level) | `tui`, `cli`, `main.rs` (and `analysis`, `experiments`, `config`, re-exported) | both crates, ratatui, crossterm, clap |

Module paths are the same in every crate: `tdn-experiments` re-exports `tdn_core::analysis` as
`analysis`, and the top-level library re-exports all three, so `crate::analysis::report::Report`
inside the experiments and `tdn_tui::analysis::report::Report` in the tests and benchmarks name the
same type.

## tdn-core: the analysis

Plain synchronous library code: give it a run, get a report. It starts no process, reads no
environment variable and draws nothing (`tests/layering.rs` checks what the compiler cannot:
that nothing it is built from, directly or not, is a terminal, screen or async runtime crate, and
that its code prints nothing).

- `model`: the recorded run, `tdn.run/1` (docs/run-format.md), as plain values.
- `load`, `import`: reading a run from a file: sniff the format, import the foreign ones
  (docs/importers.md), validate.
- `links`: dependencies between steps by verbatim value reuse.
- `detect`: the rule detectors, one file each.
- `rank`: walk back from symptom to cause, rank the suspects, the agent/user/unfinished verdict.
- `claims`: each claim of the final answer labelled by its support.
- `influence`: context influence, dropped context, confidence (docs/influence.md).
- `judge`: the optional judge's trait (the command that runs it lives in the experiments).
- `report`: `tdn.report/1` (docs/report.md), the one structure the JSON, the text and the screen share.
- `compare` (a failed run against a good one), `eval` (scores against labelled runs), `count`,
  `js_number`, `progress`: shared helpers.
- `testutil` (tests only, or the `testutil` feature for the other crates' tests): `RunBuilder`
  and the sample runs.

## tdn-experiments: re-runs and the ledger

- `experiments`: re-running the user's own agent through the command they configured
  (docs/experiments.md). `engine` plans and runs a request and reports one `event::Event` type;
  `runner`, `chat` and `session` run it; `process` runs commands so nothing outlives the debugger;
  `verdict` and `cost` turn samples into verdicts; `ledger` is the append-only attribution
  ledger (docs/ledger.md).
- `config`: settings resolved once (flags > environment > `tdn.toml` > defaults). The only place
  that reads environment variables or config paths, and the only source of commands to run.

## tdn-tui: the screen and the command line

- `tui`: the screen (docs/screen.md): one app state, one action type, one keymap table. It renders
  the report and the experiment state and computes nothing of its own.
- `cli`: one file per subcommand, a thin layer from arguments to library calls and exit codes.
- `src/main.rs`: the binary.

`tests/` (one test binary per area), `benches/`, `examples/`, `sample-runs/` and `themes/` stay at
the top level. Unit tests live beside the code in each crate; `cargo test` at the top runs every
crate's (the workspace's `default-members` are all three).

## Adding code

- Analysis that needs no process, terminal or runtime goes in `tdn-core`; if it seems to need
  one, it takes the result as an argument instead.
- A module used by another crate is `pub`; inside a crate, prefer `pub(crate)`.
- Test doubles another crate's tests need go in `analysis::testutil`.
- A new dependency goes in `[workspace.dependencies]` of the top-level `Cargo.toml` (the one
  place for versions and features), and `name = { workspace = true }` in the crates that use it.
EOF

# ---------------------------------------------------------------------------------------------
# 8. Format what the edits touched; update Cargo.lock.
# ---------------------------------------------------------------------------------------------
cargo fmt --all
# Cargo.lock: the new members and their dependency lists (no new crates, nothing downloaded).
cargo metadata --format-version 1 --offline >/dev/null
git add -A -- Cargo.toml Cargo.lock crates src tests docs README.md
echo "split-workspace: done (changes staged). Next: .ci/run, then git commit" >&2
