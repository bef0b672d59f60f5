#!/usr/bin/env bash
# The fuzz stage of CI: every harness must first CATCH its planted mutant (a
# non-zero exit with a crash artifact), then run clean for a bounded time.
#
#   PYTHON=/path/to/python bash fuzz/ci.sh
#
# Knobs (seconds / counts): FUZZ_MUTANT_TIME (default 90, the most a mutant may
# survive), FUZZ_TIME (default 45 per real harness), FUZZ_RUNS (default
# 20000000, an -atheris_runs upper bound), FUZZ_LANES (default 2 harnesses in
# parallel; the CI machine has 2 cores), FUZZ_ONLY (space-separated harness
# names). Budget with the defaults: 8 harnesses, so 4 x (mutant + 45 s + start-up) on 2
# cores (spotlight alone: mutant caught in ~14 s, 61 s in all), about 4-6 minutes.
#
# On a crash of a real harness the artifact path is printed and the stage
# fails; the artifact is in fuzz/artifacts/NAME-crash-* (see fuzz/README.md
# for minimising it and turning it into a regression test).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python}
MUTANT_TIME=${FUZZ_MUTANT_TIME:-90}
REAL_TIME=${FUZZ_TIME:-45}
RUNS=${FUZZ_RUNS:-20000000}
LANES=${FUZZ_LANES:-2}
ONLY=${FUZZ_ONLY:-}

# harness:mutant
PAIRS=(compose:one-regex readers:forget-bang defang:case-sensitive verify:skip-canonical nesting:nesting-off-by-one scan:no-lookalikes native:reference-forgets-capital-i spotlight:datamark-no-doubling)

mkdir -p fuzz/artifacts
WORK=$(mktemp -d "${TMPDIR:-/tmp}/envelock-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# run_one NAME MUTANT -> writes $WORK/NAME.summary, returns 0 on success
run_one() {
    local name=$1 mutant=$2 log t0 t1 rc execs artifact
    local summary="$WORK/$name.summary"
    local flags=(-dict="fuzz/$name.dict" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
    : >"$summary"

    # 1. Negative control: the harness must catch the planted mutant.
    log="$WORK/$name.mutant.log"
    # Start from the neutral seed only (plus the dictionary): most corpus seeds would
    # trip the mutant on replay, and the point is that *fuzzing* finds the planted bug.
    mkdir -p "$WORK/$name.mutant.corpus"
    cp fuzz/corpus/"$name"/seed-neutral-* "$WORK/$name.mutant.corpus/"
    t0=$(now)
    local attempt
    for attempt in 1 2; do
        set +e
        timeout $((MUTANT_TIME + 60)) "$PYTHON" "fuzz/fuzz_$name.py" --mutant "$mutant" "${flags[@]}" \
            -max_total_time="$MUTANT_TIME" -atheris_runs="$RUNS" \
            -artifact_prefix="$WORK/$name.mutant-" "$WORK/$name.mutant.corpus" >"$log" 2>&1
        rc=$?
        set -e
        artifact=$(ls "$WORK/$name".mutant-crash-* 2>/dev/null | head -1 || true)
        # Killed by a signal before the artifact was written (seen once: SIGALRM, exit 142, while
        # libFuzzer was handling the mutant's assertion): run the control once more. It still
        # passes only with an artifact.
        if [[ -n "$artifact" || $rc -le 128 || $rc -eq 124 ]]; then break; fi
        echo "note $name: mutant run killed by a signal (exit $rc) before writing its artifact; retried once" >>"$summary"
    done
    t1=$(now)
    if [[ $rc -eq 0 || -z "$artifact" ]]; then
        {
            echo "FAIL $name: mutant '$mutant' SURVIVED ${MUTANT_TIME}s (exit $rc, no crash artifact): the harness is broken, not green"
            tail -20 "$log"
        } >>"$summary"
        return 1
    fi
    execs=$(grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
    echo "ok   $name: mutant '$mutant' caught after $(elapsed "$t0" "$t1")s wall (start-up included; ~${execs:-0} execs; exit $rc)" >>"$summary"
    grep -m1 -E '^(AssertionError|[A-Za-z]+Error):' "$log" | cut -c1-200 | sed 's/^/       /' >>"$summary" || true

    # 2. The real harness, bounded, must exit cleanly.
    log="$WORK/$name.real.log"
    mkdir -p "$WORK/$name.corpus"
    t0=$(now)
    set +e
    timeout $((REAL_TIME + 120)) "$PYTHON" "fuzz/fuzz_$name.py" "${flags[@]}" \
        -max_total_time="$REAL_TIME" -atheris_runs="$RUNS" \
        -artifact_prefix="fuzz/artifacts/$name-" "$WORK/$name.corpus" "fuzz/corpus/$name" >"$log" 2>&1
    rc=$?
    set -e
    t1=$(now)
    execs=$(grep -Eo 'stat::number_of_executed_units:[[:space:]]+[0-9]+' "$log" | grep -Eo '[0-9]+$' || true)
    local rate
    rate=$(grep -Eo 'stat::average_exec_per_sec:[[:space:]]+[0-9]+' "$log" | grep -Eo '[0-9]+$' || true)
    if [[ $rc -ne 0 ]]; then
        {
            echo "FAIL $name: real harness exited $rc after $(elapsed "$t0" "$t1")s"
            grep -E 'Test unit written to|Uncaught Python exception|Error' "$log" | head -5 | sed 's/^/       /'
            grep -Eo 'Test unit written to .*' "$log" | sed 's/^Test unit written to /       artifact: /'
            tail -25 "$log" | sed 's/^/     | /'
        } >>"$summary"
        return 1
    fi
    echo "ok   $name: ${execs:-?} executions in $(elapsed "$t0" "$t1")s wall, ${rate:-?} exec/s, clean exit" >>"$summary"
    grep -h -E '^fuzz: ' "$log" | sort -u | sed 's/^/       /' >>"$summary" || true
}

selected=()
for pair in "${PAIRS[@]}"; do
    name=${pair%%:*}
    if [[ -n "$ONLY" && " $ONLY " != *" $name "* ]]; then continue; fi
    selected+=("$pair")
done

if ! "$PYTHON" -c 'import atheris' 2>/dev/null; then
    echo "fuzz: atheris is not installed for $PYTHON; the fuzz stage cannot run" >&2
    exit 2
fi

echo "fuzz: ${#selected[@]} harnesses, mutant bound ${MUTANT_TIME}s, real run ${REAL_TIME}s each, $LANES in parallel"
T0=$(now)
status=0
i=0
while [[ $i -lt ${#selected[@]} ]]; do
    pids=()
    names=()
    for ((k = 0; k < LANES && i < ${#selected[@]}; k++, i++)); do
        pair=${selected[$i]}
        name=${pair%%:*}
        mutant=${pair#*:}
        run_one "$name" "$mutant" &
        pids+=($!)
        names+=("$name")
    done
    for k in "${!pids[@]}"; do
        if ! wait "${pids[$k]}"; then status=1; fi
        cat "$WORK/${names[$k]}.summary"
    done
done
echo "fuzz: stage took $(elapsed "$T0" "$(now)")s; $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
