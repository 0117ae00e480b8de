# SPDX-License-Identifier: GPL-2.0-only
# bench/hooks/run.sh's per-layer-set part (sourced: $ezt, $cost, $work, $reps, $before and
# stop_recorder come from there). Per workload, ns per call with no BPF, with the empty programs
# (the floor) and traced with each layer set, by this build and by $before's eziotrace if given,
# in interleaved rounds (each round runs every setting once; the best of the rounds is printed):
# the load of a shared VM moves between rounds, not between the settings of one.

file_dir=${FILE_DIR:-$work/files}
mkdir -p "$file_dir"
workloads=${WORKLOADS:-null write read}
layer_sets=(syscall syscall,vfs syscall,vfs,fs syscall,vfs,fs,pagecache all)

# ezio_bench_hook_cost's arguments for workload $1.
workload_args() {
  case $1 in
    null) ;;
    write) echo "--write-file $file_dir" ;;
    read) echo "--read-file $file_dir" ;;
    *) echo "unknown workload '$1' (null, write, read)" >&2; exit 1 ;;
  esac
}

# ns per call of workload $2 traced by eziotrace $1 with layer set $3 (all: the default);
# the events it lost are added to $work/lost.$2.
traced_by() {
  local exe=$1 w=$2 set=$3 cache=$EZIOTRACE_CACHE_DIR
  [[ $exe == "$ezt" ]] || cache=$work/cache.before
  local layers=()
  [[ $set == all ]] || layers=(--layers "$set")
  # shellcheck disable=SC2046 # the workload's arguments are words
  EZIOTRACE_CACHE_DIR=$cache "$exe" record "${layers[@]}" -o "$work/traced" --force \
    -- "$cost" $(workload_args "$w") 2>"$work/traced.log"
  awk '/^ *(syscall|vfs|fs|pagecache|block|process) +[0-9]/ {l += $NF} END {print l + 0}' \
    "$work/traced.log" >>"$work/lost.$w"
}

# One measure of setting $2 of workload $1, appended to its file of rounds.
measure() {
  local w=$1 s=$2 ns
  # shellcheck disable=SC2046
  case $s in
    plain) ns=$("$cost" $(workload_args "$w")) ;;
    floor) ns=$("$cost" --floor $(workload_args "$w")) ;;
    this:*) ns=$(traced_by "$ezt" "$w" "${s#this:}") ;;
    before:*) ns=$(traced_by "$before" "$w" "${s#before:}") ;;
  esac
  echo "$ns" >>"$work/m.$w.$s"
}

settings=(plain floor)
for set in "${layer_sets[@]}"; do
  settings+=("this:$set")
  [[ -z $before ]] || settings+=("before:$set")
done

for w in $workloads; do : >"$work/lost.$w"; done
for ((r = 0; r < reps; r++)); do
  for w in $workloads; do
    for s in "${settings[@]}"; do measure "$w" "$s"; done
  done
done

fastest() { sort -g "$work/m.$1.$2" | head -n 1; }

# $1 label, $2 workload, $3 this build's setting, $4 the other build's (or empty).
layer_row() {
  local floor_ns ns
  floor_ns=$(fastest "$2" floor)
  ns=$(fastest "$2" "$3")
  printf '  %-34s %8.1f %+9.1f' "$1" "$ns" "$(echo "$ns - $floor_ns" | bc -l)"
  if [[ -n $4 ]]; then
    ns=$(fastest "$2" "$4")
    printf '  %8.1f %+9.1f' "$ns" "$(echo "$ns - $floor_ns" | bc -l)"
  fi
  echo
}

echo
echo "per layer set, ns per call and above the floor (the empty programs), best of $reps"
echo "interleaved rounds; files in $file_dir ($(stat -f -c %T "$file_dir"))"
for w in $workloads; do
  case $w in
    null) echo "write(fd, buf, 1) to /dev/null, fastest batch of 5000 calls" ;;
    write) echo "write(fd, buf, 4096) appending to a file (a new page each), fastest batch of 1000" ;;
    read) echo "pread(fd, buf, 4096, 0) of a cached page, fastest batch of 1000" ;;
  esac
  if [[ -n $before ]]; then
    printf '  %-34s %18s  %18s\n' "" "this build" "before ($before)"
  fi
  printf '  %-34s %8s %9s' "" "per call" "vs floor"
  [[ -z $before ]] || printf '  %8s %9s' "per call" "vs floor"
  echo
  printf '  %-34s %8.1f %+9.1f\n' "no BPF" "$(fastest "$w" plain)" \
    "$(echo "$(fastest "$w" plain) - $(fastest "$w" floor)" | bc -l)"
  printf '  %-34s %8.1f\n' "empty programs (the floor)" "$(fastest "$w" floor)"
  for set in "${layer_sets[@]}"; do
    other=
    [[ -z $before ]] || other="before:$set"
    label="--layers $set"
    [[ $set != all ]] || label="all layers"
    layer_row "$label" "$w" "this:$set" "$other"
  done
  echo "  events lost in the traced runs: $(awk '{l += $1} END {print l + 0}' "$work/lost.$w")"
done
