#!/bin/sh
# Runs two builds of tdn-tui on the same inputs and compares what they print, byte for byte:
# `analyze --json` of every file, and `analyze` as text and markdown too for the files given
# after `--all-formats`. Prints each difference and the counts; exits 1 when any output differs.
#
#   benches/support/same_reports.sh OLD_BINARY NEW_BINARY FILE... [--all-formats FILE...]
#
# (docs/performance.md: a change to how the analysis is made must not change what it concludes.)
set -u
old=$1
new=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
same=0
differ=0
formats=json
for f in "$@"; do
    if [ "$f" = "--all-formats" ]; then
        formats="json text markdown"
        continue
    fi
    for format in $formats; do
        "$old" analyze "$f" --format "$format" >"$tmp/old" 2>"$tmp/old.err"
        old_rc=$?
        "$new" analyze "$f" --format "$format" >"$tmp/new" 2>"$tmp/new.err"
        new_rc=$?
        if [ $old_rc -eq $new_rc ] && cmp -s "$tmp/old" "$tmp/new" && cmp -s "$tmp/old.err" "$tmp/new.err"; then
            same=$((same + 1))
        else
            differ=$((differ + 1))
            echo "differs: $f ($format; exit $old_rc and $new_rc)"
        fi
    done
done
echo "$same outputs the same, $differ different"
[ $differ -eq 0 ]
