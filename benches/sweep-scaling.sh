#!/bin/sh
# Whole-process time of the 32-point sweep at several --jobs, and a check that
# every --jobs gives the same results. Usage: benches/sweep-scaling.sh [FUTEXSIM] [JOBS...]
set -e
bin=${1:-target/release/futexsim}
shift 2>/dev/null || true
out=${OUT:-$(mktemp -d)}
for jobs in ${@:-1 2}; do
    start=$(date +%s%N)
    "$bin" run benches/configs/sweep-32.toml --jobs "$jobs" --out "$out/jobs-$jobs" >/dev/null 2>&1
    end=$(date +%s%N)
    echo "jobs $jobs: $(( (end - start) / 1000000 )) ms"
    cmp "$out/jobs-$jobs/results.json" "$out/jobs-${first:=$jobs}/results.json"
done
