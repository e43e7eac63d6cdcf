#!/usr/bin/env bash
# One call on the GPU machine: build, GPU tests, benchmarks; logs under $OUT (the device tool's folder).
#   STEPS="tests bench" bash scripts/device_run.sh      (default: tests bench)
#   TUNE_SHAPES=subset.csv STEPS="tune tabled": re-tune a subset into a copy of the shipped table (profile_merge.py)
#   PROBE_SHAPES=s.csv PROBE_KERNELS=a,b STEPS=probe: named kernels timed beside the pick and cuBLASLt (dev A/B)
#   STEPS="tune verify": the new table benched 2-way VERIFY_RUNS times, its losing rows handed back to cuBLASLt's
#   default (scripts/revert_losers.py), and the result benched once more (KEEP=sm90_132_bf16_verified.csv)
#   TOP_FROM=profile.csv STEPS="promote verify": rows switched to a candidate that beat the pick in the top-3
#   re-check (scripts/promote_winners.py), then verified as above
#   STEPS="tune gain tabled" (or "promote gain tabled", or CANDIDATE=table.csv STEPS="gain tabled"): the changed rows
#   benched old and new in turn, kept only where the new pick reads faster, and not below 1.0x and the old pick in plain
#   launches (KEEP=sm90_132_bf16.csv)
# Needs .deps/googletest (copied from /usr/src/googletest here) carried along: that machine has no GoogleTest.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-/tmp/tgemm_out}
# The device tool returns at most 8 files: logs go to a work folder, packed into logs.tgz at the end.
OUT=/tmp/tgemm_logs
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
trap 'tar czf "$FINAL/logs.tgz" -C "$OUT" . ; cp "$OUT/summary.txt" "$FINAL/" 2>/dev/null; for f in $KEEP; do cp "$OUT/$f" "$FINAL/" 2>/dev/null; done' EXIT
KEEP=${KEEP:-}
STEPS=${STEPS:-"tests bench"}
export PATH=/usr/local/cuda/bin:$PATH
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
t0=$(date +%s)
PYOPT="-DTGEMM_BUILD_PYTHON=OFF"
case " $STEPS " in *" python "*|*" example "*|*" power "*) PYOPT="-DTGEMM_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(command -v python3)" ;; esac
# Every backend, even where build-dev was last configured by a dev script that left some out (the cache keeps it).
cmake -S . -B build-dev $GEN -DCMAKE_BUILD_TYPE=Release -DTGEMM_BUILD_TESTS=ON -DTGEMM_GTEST_SOURCE="$PWD/.deps/googletest" $PYOPT \
  -DTGEMM_EXCLUDE_BACKENDS= ${CMAKE_EXTRA:-} > "$OUT/build.log" 2>&1 &&
cmake --build build-dev -j 16 >> "$OUT/build.log" 2>&1
rc=$?
log "build rc=$rc in $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit $rc; }
# A tune profile as `tgemm bench --top-from` reads it (plain CSV): $1 itself, or a gzip one unpacked into $OUT.
plain_profile() {
  if [ "$(head -c 2 "$1" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then zcat "$1" > "$OUT/top_profile.csv"; echo "$OUT/top_profile.csv"
  else echo "$1"; fi
}
# The tables in force for a bench: this call's tuned table (else the shipped one), and its eager table (rows for plain
# launches: this call's, else the shipped one, if any). TGEMM_CONFIG replaces the embedded tables, eager ones included.
tables() {
  local g="$OUT/sm90_132_bf16.csv" e="$OUT/sm90_132_bf16_eager.csv"
  [ -f "$g" ] || g="$PWD/configs/sm90_132_bf16.csv"
  [ -f "$e" ] || e="$PWD/configs/sm90_132_bf16_eager.csv"
  if [ -f "$e" ]; then echo "$g:$e"; else echo "$g"; fi
}
# Both suites benched with the table $1, each into $OUT/<$2 with %s the suite>.csv and .log; more bench arguments after.
bench_suites() {
  local table=$1 name=$2 suite f; shift 2
  for suite in seed models; do
    f=$(printf "$name" $suite)
    TGEMM_CONFIG="$table" ./build-dev/tgemm bench -i shapes/$suite.csv --no-ceilings --csv "$OUT/$f.csv" "$@" > "$OUT/$f.log" 2>&1
    rc=$((rc|$?))
  done
}
for step in $STEPS; do
  t0=$(date +%s); rc=0
  case $step in
    # TEST_TIMEOUT (s): a kernel that hangs costs this much of the call, not all of it (run 297 lost 570 s).
    tests) timeout ${TEST_TIMEOUT:-300} ./build-dev/tests/tgemm_gpu_tests --gtest_color=no ${GTEST_ARGS:-} > "$OUT/gpu_tests.log" 2>&1; rc=$?
           [ $rc -eq 124 ] && echo "gpu tests: no end within ${TEST_TIMEOUT:-300} s (hung); last lines:" && tail -3 "$OUT/gpu_tests.log"
           grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|FAILED TEST|Failure|checked|cuBLASLt M=|mm M=" "$OUT/gpu_tests.log" | head -60 ;;
    bench) ./build-dev/tgemm bench -i shapes/seed.csv ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench_seed.log"; rc=$? ;;
    # Seed shapes with the table in force, each candidate back to back for 200 ms per sample (power-capped clocks).
    sustained) [ -f "$OUT/sm90_132_bf16.csv" ] && export TGEMM_CONFIG="$OUT/sm90_132_bf16.csv"
          TOP=""; [ -f "$OUT/tune_profile.csv" ] && TOP="--top-from $OUT/tune_profile.csv"
          ./build-dev/tgemm bench -i shapes/seed.csv --timing sustained --warmup 1 --iters ${SUSTAINED_ITERS:-6} --no-ceilings $TOP \
            --csv "$OUT/bench_seed_sustained.csv" > "$OUT/bench_seed_sustained.log" 2>&1; rc=$?; unset TGEMM_CONFIG
          tail -3 "$OUT/bench_seed_sustained.log" ;;
    models) ./build-dev/tgemm bench -i shapes/models.csv --no-ceilings ${BENCH_ARGS:-} --csv "$OUT/bench_models.csv" > "$OUT/bench_models.log" 2>&1; rc=$?
           tail -5 "$OUT/bench_models.log" ;;
    repro) ./build-dev/tgemm repro 2>&1 | tee "$OUT/repro.log"; rc=$? ;;
    check) ./build-dev/tgemm check ${CHECK_ARGS:-} > "$OUT/check.log" 2>&1; rc=$?; grep -E "FAILED|^check:" "$OUT/check.log" | head -30 ;;
    # compute-sanitizer memcheck (no --leak-check: the process-wide dispatcher keeps its stream workspaces until exit by
    # design) over every registered kernel, or those of SANITIZE_KERNELS (names, space or comma separated), in one
    # process per input dtype, on SANITIZE_SHAPES (default: odd sizes, tails, long K, fp32 Y). An out-of-bounds access
    # anywhere fails the step (exit 9), and bench checks every result against the reference as usual. SANITIZE_TOOL
    # (racecheck, synccheck, ...) and SANITIZE_ARGS (e.g. --kernel-name kns=tgemm) pick another check.
    sanitize|memcheck)
      for dt in bf16 fp16; do
        tdt=$([ $dt = bf16 ] && echo bfloat16 || echo float16)
        ks=$(if [ -n "${SANITIZE_KERNELS:-}" ]; then echo "$SANITIZE_KERNELS" | tr ', ' '\n\n'; else ./build-dev/tgemm kernels | awk 'NR > 1 { print $1 }'; fi |
             grep "_${dt}_" | paste -sd, -)
        [ -n "$ks" ] || continue
        grep -E "^M,|,torch\.$tdt," "${SANITIZE_SHAPES:-scripts/dev/data/memcheck_shapes.csv}" > "$OUT/memcheck_$dt.csv"
        timeout ${SANITIZE_TIMEOUT:-280} compute-sanitizer --tool ${SANITIZE_TOOL:-memcheck} ${SANITIZE_ARGS:-} --error-exitcode 9 ./build-dev/tgemm bench \
          -i "$OUT/memcheck_$dt.csv" --timing plain --warmup 0 --iters 1 --no-ceilings --kernel "$ks" > "$OUT/memcheck_$dt.log" 2>&1
        r=$?; rc=$((rc|r))
        echo "memcheck $dt rc=$r: $(echo "$ks" | tr , '\n' | wc -l) kernels; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/memcheck_$dt.log" | tail -1);" \
          "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ .*\| (sm90|skinny)' "$OUT/memcheck_$dt.log") kernel x shape runs; $(tail -1 "$OUT/memcheck_$dt.log")"
      done ;;
    tune) RETUNE=""
          if [ -n "${TUNE_SHAPES:-}" ]; then
            # Re-tune only these shapes into the shipped table; every other shape keeps its row, and its profile rows
            # come back with the merge below (the tuner starts this call's profile empty).
            cp "$TUNE_SHAPES" "$OUT/suites.csv"; cp configs/sm90_132_bf16.csv "$OUT/sm90_132_bf16.csv"; RETUNE=--retune
          else
            { cat shapes/seed.csv; tail -n +2 shapes/models.csv; } > "$OUT/suites.csv"
          fi
          # TUNE_TIMEOUT: SIGTERM leaves a valid table of the shapes done (the tuner saves after every shape).
          timeout -s TERM ${TUNE_TIMEOUT:-3000} ./build-dev/tgemm tune -i "$OUT/suites.csv" -o "$OUT/sm90_132_bf16.csv" --profile-file "$OUT/tune_profile.csv" $RETUNE ${TUNE_ARGS:-} \
            > "$OUT/tune.log" 2> "$OUT/tune.err"; rc=$?; tail -3 "$OUT/tune.log"; tail -c 600 "$OUT/tune.err"; echo
          # A re-tune of some backends only (--libtype) keeps the shipped rows of the others for those shapes, so the
          # profile stays whole for the top-3 re-check and the reports (profile_merge.py; session 28 merged by hand).
          if [ -n "${TUNE_SHAPES:-}" ]; then
            python3 scripts/profile_merge.py docs/data/tune_profile.csv.gz "$OUT/tune_profile.csv" > "$OUT/tune_profile_merged.csv" &&
              mv "$OUT/tune_profile_merged.csv" "$OUT/tune_profile.csv"
          fi
          # Issue 3's targets from this profile (with --retune it holds every shape: the re-tuned ones and the rest).
          python3 scripts/sm90_report.py --profile "$OUT/tune_profile.csv" -o "$OUT/sm90_report.md" | tail -3 ;;
    # The table tuned in this run, else the shipped one.
    # TOP_FROM=profile.csv: the top-3 re-check against that profile (issue 5) where no tune ran in this call.
    # A second "tabled" in STEPS (two benches in one call) writes *_tuned_r2.*, with TOP_FROM2 if set (TOP_FROM=/none
    # TOP_FROM2=profile.csv: the plain 2-way bench, then the top-3 re-check; BENCH_ARGS2, if set, replaces BENCH_ARGS
    # there, e.g. "--pairwise --settle-ms 100").
    tabled) export TGEMM_CONFIG=$(tables)
          r=""; TP=${TOP_FROM:-$OUT/tune_profile.csv}; BA=${BENCH_ARGS:-}
          [ -f "$OUT/bench_seed_tuned.csv" ] && { r=_r2; TP=${TOP_FROM2:-$TP}; BA=${BENCH_ARGS2:-$BA}; }
          TOP=""; [ -f "$TP" ] && TOP="--top-from $(plain_profile "$TP")"
          ./build-dev/tgemm bench -i shapes/seed.csv --csv "$OUT/bench_seed_tuned$r.csv" $TOP $BA > "$OUT/bench_seed_tuned$r.log" 2>&1; rc=$?
          ./build-dev/tgemm bench -i shapes/models.csv --no-ceilings --csv "$OUT/bench_models_tuned$r.csv" $TOP $BA > "$OUT/bench_models_tuned$r.log" 2>&1; rc=$((rc|$?))
          unset TGEMM_CONFIG; tail -4 "$OUT/bench_seed_tuned$r.log"; tail -4 "$OUT/bench_models_tuned$r.log"; grep -c "more than 3% off" "$OUT/bench_models_tuned$r.log"
          # Issue 3's targets from these benches (the profile serves the shapes whose pick is not an sm90 kernel).
          RP=docs/data/tune_profile.csv.gz; [ -f "$TP" ] && RP=$TP
          python3 scripts/sm90_report.py --profile "$RP" --bench "$OUT/bench_seed_tuned$r.csv" \
            --bench "$OUT/bench_models_tuned$r.csv" -o "$OUT/sm90_report$r.md" | tail -1 ;;
    # The table tuned in this run (else the shipped one) benched 2-way VERIFY_RUNS times (default 3); rows whose pick
    # read below 1.0x in VERIFY_MIN_RUNS (default 2) of them go back to cuBLASLt's default (revert_losers.py), into
    # $OUT/sm90_132_bf16_verified.csv; then one fresh bench of that table (the runs that chose it would flatter it).
    verify) T="$OUT/sm90_132_bf16.csv"; [ -f "$T" ] || T="$PWD/configs/sm90_132_bf16.csv"
          VRUNS=""
          for r in $(seq 1 ${VERIFY_RUNS:-3}); do
            bench_suites "$T" "verify_%s_r$r"; VRUNS="$VRUNS $OUT/verify_seed_r$r.csv $OUT/verify_models_r$r.csv"
            tail -2 "$OUT/verify_models_r$r.log" | head -1
          done
          python3 scripts/revert_losers.py "$T" $VRUNS --min-runs ${VERIFY_MIN_RUNS:-2} > "$OUT/sm90_132_bf16_verified.csv" \
            2> "$OUT/revert_losers.log"; rc=$((rc|$?)); cat "$OUT/revert_losers.log"
          bench_suites "$OUT/sm90_132_bf16_verified.csv" "verified_%s"
          for suite in seed models; do tail -2 "$OUT/verified_$suite.log" | head -1; done ;;
    # Issue 5's top-3 re-check PROMOTE_RUNS times (default 2) on the table tuned in this call (else the shipped one),
    # against $OUT/tune_profile.csv or TOP_FROM; rows where a candidate beat the pick by > 3% in PROMOTE_MIN_RUNS
    # (default 2) of them switch to it (promote_winners.py). The result replaces $OUT/sm90_132_bf16.csv (the input is
    # kept as sm90_132_bf16_before_promote.csv), so a "verify" step after it benches it 2-way and reverts its losers.
    promote) T="$OUT/sm90_132_bf16.csv"; [ -f "$T" ] || cp configs/sm90_132_bf16.csv "$T"
          TP=${TOP_FROM:-$OUT/tune_profile.csv}
          if [ ! -f "$TP" ]; then echo "promote: no profile ($TP): run tune first or set TOP_FROM"; rc=2; else
            TP=$(plain_profile "$TP"); PRUNS=""
            for r in $(seq 1 ${PROMOTE_RUNS:-2}); do
              bench_suites "$T" "top_%s_r$r" --top-from "$TP"; PRUNS="$PRUNS $OUT/top_seed_r$r.csv $OUT/top_models_r$r.csv"
              grep -h "table pick within 3%" "$OUT"/top_*_r$r.log
            done
            cp "$T" "$OUT/sm90_132_bf16_before_promote.csv"
            python3 scripts/promote_winners.py "$OUT/sm90_132_bf16_before_promote.csv" $PRUNS --min-runs ${PROMOTE_MIN_RUNS:-2} \
              > "$T" 2> "$OUT/promote_winners.log"; rc=$((rc|$?)); cat "$OUT/promote_winners.log"
          fi ;;
    # The rows where CANDIDATE (a table; default: the one tuned or promoted in this call) differs from the shipped table,
    # benched GAIN_RUNS times (default 3) with each table in turn, 2-way against cuBLASLt; a changed row is taken only
    # where the median of its new pick's reads beats the old pick's by more than 0.5% (scripts/dev/keep_gainers.py).
    # The result becomes $OUT/sm90_132_bf16.csv, so "tabled" and "decode" after it bench it. Session 28 ran this by hand
    # (runs 261-265): a re-tune's rows reverted or kept this way, instead of against reads from earlier calls.
    # GAIN_CONTEXT=suites benches both whole suites with each table instead of the changed rows alone, so the reads
    # come from the bench the shipped figures come from, in the state its long run leaves the card (run 270: 18 of 26
    # rows kept). At 4096^3 the two agreed (cublaslt_h5 0.964-0.969x in whole suites, 0.967-0.984x alone); the top-3
    # re-check's shared rounds read it 1.033-1.040x.
    # With the changed rows alone, each run also benches them in plain launches (GAIN_PLAIN=0: not): a row that gains in
    # graph replay is dropped where its new pick reads below 1.0x and below the old pick in plain launches (session 48).
    # Where an "eager" step follows (decode rows: plain launches get their own rows), GAIN_PLAIN=0 judges on graph reads
    # alone, as run 422 did; the plain check still guards shapes that no eager row covers.
    gain) C=${CANDIDATE:-$OUT/sm90_132_bf16.csv}
          if [ ! -f "$C" ]; then echo "gain: no candidate table ($C): run tune or promote first, or set CANDIDATE"; rc=2; else
            cp "$C" "$OUT/gain_candidate.csv"
            python3 scripts/dev/changed_shapes.py configs/sm90_132_bf16.csv "$OUT/gain_candidate.csv" > "$OUT/gain_shapes.csv"
            echo "gain: $(( $(wc -l < "$OUT/gain_shapes.csv") - 1 )) changed rows"
            OLDR=""; NEWR=""; OLDP=""; NEWP=""; RUNS=${GAIN_RUNS:-3}; [ "$(wc -l < "$OUT/gain_shapes.csv")" -gt 1 ] || RUNS=0
            for r in $(seq 1 $RUNS); do
              for side in old new; do
                T=configs/sm90_132_bf16.csv; [ $side = new ] && T="$OUT/gain_candidate.csv"
                F="$OUT/gain_${side}_r$r.csv"
                if [ "${GAIN_CONTEXT:-rows}" = suites ]; then
                  bench_suites "$T" "gain_${side}_%s_r$r"; F="$OUT/gain_${side}_seed_r$r.csv $OUT/gain_${side}_models_r$r.csv"
                else
                  TGEMM_CONFIG="$T" ./build-dev/tgemm bench -i "$OUT/gain_shapes.csv" --no-ceilings --csv "$F" \
                    > "$OUT/gain_${side}_r$r.log" 2>&1; rc=$((rc|$?))
                  if [ "${GAIN_PLAIN:-1}" != 0 ]; then
                    P="$OUT/gain_${side}_plain_r$r.csv"
                    TGEMM_CONFIG="$T" ./build-dev/tgemm bench -i "$OUT/gain_shapes.csv" --no-ceilings --timing plain --csv "$P" \
                      > "$OUT/gain_${side}_plain_r$r.log" 2>&1; rc=$((rc|$?))
                    if [ $side = old ]; then OLDP="$OLDP $P"; else NEWP="$NEWP $P"; fi
                  fi
                fi
                if [ $side = old ]; then OLDR="$OLDR $F"; else NEWR="$NEWR $F"; fi
              done
            done
            if [ $RUNS -eq 0 ]; then cp configs/sm90_132_bf16.csv "$OUT/sm90_132_bf16.csv"; else
              PLAINARGS=""; [ -n "$NEWP" ] && PLAINARGS="--plain-old $OLDP --plain-new $NEWP"
              python3 scripts/dev/keep_gainers.py configs/sm90_132_bf16.csv "$OUT/gain_candidate.csv" --prefix "" --old $OLDR \
                --new-runs $NEWR $PLAINARGS > "$OUT/sm90_132_bf16.csv" 2> "$OUT/keep_gainers.log"; rc=$((rc|$?)); cat "$OUT/keep_gainers.log"
            fi
          fi ;;
    # The eager table (issue 4's plain launches): EAGER_SHAPES (default shapes/decode.csv) tuned with plain launches
    # (skinny and cuBLASLt), the rows whose pick differs from the graph table's benched EAGER_RUNS times (default 5: plain
    # reads of one kernel on the 8192 x 1024 layers spread by +-5% between calls, runs 421-422) in plain launches with
    # and without them, and kept where the median reads faster (scripts/dev/eager_rows.py), into
    # $OUT/sm90_132_bf16_eager.csv (KEEP it to ship; "decode" and "tabled" after it bench with it).
    eager) G="$OUT/sm90_132_bf16.csv"; [ -f "$G" ] || G="$PWD/configs/sm90_132_bf16.csv"
          timeout -s TERM ${TUNE_TIMEOUT:-400} ./build-dev/tgemm tune -i "${EAGER_SHAPES:-shapes/decode.csv}" -o "$OUT/tuned_eager.csv" \
            --timing plain --libtype ${EAGER_LIBTYPES:-skinny,cublaslt} --profile-file "$OUT/eager_profile.csv" ${EAGER_TUNE_ARGS:-} \
            > "$OUT/eager_tune.log" 2> "$OUT/eager_tune.err"; rc=$?; tail -2 "$OUT/eager_tune.log"; tail -c 400 "$OUT/eager_tune.err"
          python3 scripts/dev/eager_rows.py candidates "$G" "$OUT/tuned_eager.csv" > "$OUT/cand_eager.csv"; rc=$((rc|$?))
          python3 scripts/dev/changed_shapes.py /dev/null "$OUT/cand_eager.csv" > "$OUT/eager_shapes.csv"
          echo "eager: $(( $(wc -l < "$OUT/eager_shapes.csv") - 1 )) rows differ from the graph table's picks"
          OLDR=""; NEWR=""
          if [ "$(wc -l < "$OUT/eager_shapes.csv")" -gt 1 ]; then
            for r in $(seq 1 ${EAGER_RUNS:-5}); do
              for side in old new; do
                T="$G"; [ $side = new ] && T="$G:$OUT/cand_eager.csv"
                TGEMM_CONFIG="$T" ./build-dev/tgemm bench -i "$OUT/eager_shapes.csv" --no-ceilings --timing plain \
                  --csv "$OUT/eager_${side}_r$r.csv" > "$OUT/eager_${side}_r$r.log" 2>&1; rc=$((rc|$?))
                if [ $side = old ]; then OLDR="$OLDR $OUT/eager_old_r$r.csv"; else NEWR="$NEWR $OUT/eager_new_r$r.csv"; fi
              done
            done
            python3 scripts/dev/eager_rows.py keep "$G" "$OUT/cand_eager.csv" --old $OLDR --new-runs $NEWR \
              > "$OUT/sm90_132_bf16_eager.csv" 2> "$OUT/eager_rows.log"; rc=$((rc|$?)); cat "$OUT/eager_rows.log"
          fi ;;
    # Decode shapes in both timing modes with the table tuned in this run (if any), and the issue-4 report.
    decode) export TGEMM_CONFIG=$(tables)
          for m in graph plain; do
            ./build-dev/tgemm bench -i shapes/decode.csv --timing $m --csv "$OUT/bench_decode_$m.csv" ${DECODE_ARGS:-} \
              > "$OUT/bench_decode_$m.log" 2>&1; rc=$((rc|$?))
          done
          unset TGEMM_CONFIG
          # The crossover table comes from this run's tune profile, else from the shipped one.
          PROF_CSV="$OUT/tune_profile.csv"; [ -f "$PROF_CSV" ] || PROF_CSV=docs/data/tune_profile.csv.gz
          PROF="--profile $PROF_CSV"
          python3 scripts/decode_report.py --bench graph="$OUT/bench_decode_graph.csv" --bench plain="$OUT/bench_decode_plain.csv" \
            --copy-from-log "$OUT/bench_decode_graph.log" $PROF --stream-probe docs/data/stream_probe.csv -o "$OUT/decode_report.md" | tail -2 ;;
    # A/B of the tensor-map cache on plain launches (the default "decode" step has it on).
    decode_nocache) TGEMM_TMA_CACHE=0 ./build-dev/tgemm bench -i shapes/decode.csv --timing plain --no-ceilings \
            --csv "$OUT/bench_decode_plain_nocache.csv" ${DECODE_ARGS:-} > "$OUT/bench_decode_plain_nocache.log" 2>&1; rc=$?
          tail -1 "$OUT/bench_decode_plain_nocache.log" ;;
    python) PYTHONPATH=build-dev/python PYTHONUNBUFFERED=1 python3 -m pytest tests/python -v -rs > "$OUT/pytest.log" 2>&1; rc=$?
            grep -E "passed|failed|PASSED|FAILED|SKIPPED|Error" "$OUT/pytest.log" | tail -40 ;;
    example) PYTHONPATH=build-dev/python PYTHONUNBUFFERED=1 python3 examples/vit_encoder_profile.py ${EXAMPLE_ARGS:-} 2>&1 | tee "$OUT/vit_example.log"; rc=$? ;;
    # Named kernels beside the dispatcher's pick and cuBLASLt, interleaved in one process, PROBE_REPS rounds, once per
    # environment of PROBE_ENVS ("-" none, else VAR=value[,VAR=value]).
    probe) for v in ${PROBE_ENVS:--}; do
             lab=$(printf %s "$v" | tr -c 'A-Za-z0-9=,.-' _)  # a file name (no slashes of a path value)
             for r in $(seq 1 ${PROBE_REPS:-2}); do
               env $( [ "$v" = - ] || echo "$v" | tr , ' ') timeout ${PROBE_TIMEOUT:-300} ./build-dev/tgemm bench -i "$PROBE_SHAPES" --no-ceilings \
                 --kernel "$PROBE_KERNELS" ${PROBE_ARGS:-} --csv "$OUT/probe_${lab}_r$r.csv" > "$OUT/probe_${lab}_r$r.log" 2>&1
               rc=$((rc|$?))
             done
           done
           python3 scripts/dev/probe_summary.py "$OUT"/probe_*_r*.csv | tee "$OUT/probe_summary.txt" ;;
    # The top-3 re-check's rounds with and without a pause before each (bench --settle-ms): SETTLE_MS values
    # (default "0 100") alternated SETTLE_REPS times (default 2) on SETTLE_SHAPES, against SETTLE_TOP_FROM (default
    # the shipped profile); scripts/dev/settle_summary.py shows how far the pick's clock moved between rounds.
    settle) TP=$(plain_profile "${SETTLE_TOP_FROM:-docs/data/tune_profile.csv.gz}")
            for r in $(seq 1 ${SETTLE_REPS:-2}); do
              for s in ${SETTLE_MS:-0 100}; do
                ./build-dev/tgemm bench -i "${SETTLE_SHAPES:-scripts/dev/settle_shapes.csv}" --no-ceilings --pairwise --settle-ms "$s" \
                  --top-from "$TP" ${SETTLE_ARGS:-} --csv "$OUT/settle_${s}_r$r.csv" > "$OUT/settle_${s}_r$r.log" 2>&1; rc=$((rc|$?))
              done
            done
            python3 scripts/dev/settle_summary.py "$OUT"/settle_*_r*.csv > "$OUT/settle_summary.txt"; tail -60 "$OUT/settle_summary.txt" ;;
    # MODES_SHAPES' top candidates (MODES_TOP, default 8, from MODES_TOP_FROM or the shipped profile) in 2-way rounds
    # against the pick, under graph replay and with plain launches: which kernels lead in each launch mode.
    modes) TP=$(plain_profile "${MODES_TOP_FROM:-docs/data/tune_profile.csv.gz}")
           for m in graph plain; do
             ./build-dev/tgemm bench -i "${MODES_SHAPES:-shapes/decode.csv}" --no-ceilings --pairwise --timing $m \
               --top-from "$TP" --top ${MODES_TOP:-8} ${MODES_ARGS:-} --csv "$OUT/modes_$m.csv" > "$OUT/modes_$m.log" 2>&1
             rc=$((rc|$?)); tail -1 "$OUT/modes_$m.log"
           done ;;
    ncu) bash scripts/dev/ncu_profile.sh build-dev "$OUT"; rc=$? ;;
    # Power, SM clock and energy per FLOP of tgemm's pick and F.linear, each alone for seconds (POWER_SHAPES: M,N,K,bias).
    power) PYTHONPATH=build-dev/python python3 scripts/dev/power_probe.py ${POWER_SHAPES:-340000,6144,1280,1 8192,6144,1280,1} \
             > "$OUT/power.txt" 2> "$OUT/power.err"; rc=$?; cat "$OUT/power.txt"; tail -3 "$OUT/power.err" ;;
    host) ./build-dev/tgemm_bench_host 2>&1 | tee "$OUT/host_overhead.log"; rc=$? ;;
    *) log "unknown step $step"; rc=2 ;;
  esac
  log "$step rc=$rc in $(( $(date +%s) - t0 )) s"
done
cat "$OUT/summary.txt"
