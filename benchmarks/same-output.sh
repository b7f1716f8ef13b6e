#!/usr/bin/env bash
# Runs every command that reads results files over the repository's results/ with two benchhost binaries and
# diffs what each printed and wrote, byte for byte. For a change that must not change behaviour (a refactor):
#
#   cp target/debug/benchhost /tmp/benchhost-before      # before the change
#   ... change, build ...
#   bash benchmarks/same-output.sh /tmp/benchhost-before target/debug/benchhost
#
# Exit 0 when every output is identical; otherwise the diff of the first that is not, and exit 1.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each binary runs as `benchhost` (clap prints argv[0] in usage lines).
mkdir -p "$work/bin/before" "$work/bin/after"
cp "$1" "$work/bin/before/benchhost"
cp "$2" "$work/bin/after/benchhost"
before="$work/bin/before/benchhost"
after="$work/bin/after/benchhost"
cd "$(dirname "$0")/.."
results=(results/*.jsonl)

# Each line: a name, then the arguments. `@DIR@` is a scratch directory of the binary's own.
commands=(
  "show|show ${results[*]}"
  "verify|verify ${results[*]}"
  "report-md|report ${results[*]} --format md"
  "report-csv|report ${results[*]} --format csv"
  "report-json|report ${results[*]} --format json"
  "report-bmf|report ${results[*]} --format bmf"
  "report-html|report ${results[*]} --format html"
  "report-gab|report ${results[*]} --format gab --out @DIR@/gab"
  "compare|compare results/wal.jsonl results/wal.jsonl"
  "compare-threshold|compare results/ingest.jsonl results/ingest.jsonl --threshold 1% --fail-on regressed"
  "merge|merge @DIR@/merged.jsonl ${results[*]}"
  "help|--help"
  "run-help|run --help"
  "report-help|report --help"
)

status=0
for entry in "${commands[@]}"; do
  name=${entry%%|*}
  args=${entry#*|}
  for side in before after; do
    dir="$work/$side/$name"
    mkdir -p "$dir"
    bin=$before
    [ "$side" = after ] && bin=$after
    # shellcheck disable=SC2086
    (set +e; "$bin" ${args//@DIR@/$dir} >"$dir/stdout" 2>"$dir/stderr"; echo "exit $?" >"$dir/exit")
    # Paths of the scratch directory differ by side; nothing else may.
    sed -i "s#$dir#@DIR@#g" "$dir/stdout" "$dir/stderr"
  done
  if diff -r "$work/before/$name" "$work/after/$name" >"$work/diff"; then
    echo "same: $name"
  else
    echo "DIFFERENT: $name"
    head -40 "$work/diff"
    status=1
  fi
done
exit $status
