#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# srun_spank_test.sh PLUGIN: Debian's own srun loads the SPANK plugin of `srun --eziotrace`
# (converters/cluster/spank/) from a plugstack.conf of this test, with a stand-in for eziotrace
# that writes down its arguments and environment. No controller is needed: srun is replaced
# before it asks for one (and when it is not, it fails to find the controller, which the test
# tells from a recording). Checks the command that replaces srun, Slurm's option variables gone
# from its environment, the refusals of srun, salloc and sbatch, and the marker that makes an
# srun inside a recorded step ignore the option. Exit 0 when every check passed.
set -uo pipefail
plugin=$1
for c in srun salloc sbatch; do
  command -v $c >/dev/null || { echo "FAIL: $c is not installed (scripts/setup.sh test)"; exit 1; }
done
[ -e "$plugin" ] || { echo "FAIL: no $plugin"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/slurm.conf" <<CONF
ClusterName=eziotest
SlurmctldHost=ezio-no-controller.invalid
PlugStackConfig=$dir/plugstack.conf
NodeName=n1 CPUs=1 State=UNKNOWN
PartitionName=p Nodes=ALL Default=YES
CONF
echo "required $plugin eziotrace=$dir/eziotrace" > "$dir/plugstack.conf"
cat > "$dir/eziotrace" <<'STANDIN'
#!/usr/bin/env bash
printf '%s\n' "$@" > "$STANDIN_OUT.args"
env > "$STANDIN_OUT.env"
STANDIN
chmod +x "$dir/eziotrace"
export SLURM_CONF=$dir/slurm.conf
unset SLURM_JOB_ID SLURM_JOBID EZIOTRACE_SPANK_STEP EZIOTRACE_SESSION
failures=0
ok() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }

# expect NAME "ARGS..." COMMAND...: COMMAND exits 0 having run the stand-in with ARGS (one line).
expect() {
  local name=$1 want=$2
  shift 2
  export STANDIN_OUT=$dir/$name
  timeout 60 "$@" > "$dir/$name.out" 2>&1
  local rc=$? got
  got=$(tr '\n' ' ' < "$dir/$name.args" 2>/dev/null)
  if [ $rc -eq 0 ] && [ "$got" = "$want " ]; then ok "$name: eziotrace $got"; else
    fail "$name: status $rc, eziotrace run with '$got', want '$want'; $(cat "$dir/$name.out")"
  fi
  if grep -q 'SPANK_OPTION_eziotrace' "$dir/$name.env" 2>/dev/null; then
    fail "$name: Slurm's option variable reached eziotrace: $(grep SPANK_OPTION "$dir/$name.env")"
  fi
}
# refused NAME TEXT COMMAND...: COMMAND fails, says TEXT, and does not run the stand-in.
refused() {
  local name=$1 text=$2
  shift 2
  export STANDIN_OUT=$dir/$name
  timeout 60 "$@" > "$dir/$name.out" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] && grep -qF -- "$text" "$dir/$name.out" && [ ! -e "$dir/$name.args" ]; then
    ok "$name: status $rc, '$(grep -F -- "$text" "$dir/$name.out" | head -n 1)'"
  else
    fail "$name: status $rc, stand-in run: $([ -e "$dir/$name.args" ] && echo yes || echo no); $(cat "$dir/$name.out")"
  fi
}

expect dir "record -o out -- srun -N 2 --mpi pmi2 ./app --eziotrace=y" \
  srun --eziotrace=out -N 2 --mpi pmi2 ./app --eziotrace=y
grep -qx 'EZIOTRACE_SPANK_STEP=out' "$dir/dir.env" && ok "the marker is set for eziotrace" ||
  fail "EZIOTRACE_SPANK_STEP=out not in eziotrace's environment"
expect next-word "run -t mpich,posixio -o out2 -- srun -N 2 ./app" \
  srun -N 2 --ezio out2,tools=mpich+posixio ./app
expect run "run -o out3 -- srun -n1 -- ./app" srun --eziotrace=out3,run -n1 -- ./app
expect env "record -o envdir -- srun -N1 ./app" \
  env SLURM_SPANK__SLURM_SPANK_OPTION_eziotrace_eziotrace=envdir srun -N1 ./app
refused empty "needs the archive's directory" srun --eziotrace= ./app
refused two-dirs "two directories" srun --eziotrace=a,b ./app
refused unknown "unknown item 'mode=run'" srun --eziotrace=a,mode=run ./app
refused option-as-value "not an srun option" srun --eziotrace -N 2 ./app
refused salloc "option of srun" salloc --eziotrace=x true
refused sbatch "option of srun" sbatch --eziotrace=x --wrap true
# Inside a recorded step srun goes on without recording: here it then fails to find the controller.
refused inside "--eziotrace ignored" env EZIOTRACE_SPANK_STEP=outer srun --eziotrace=x ./app
[ $failures -eq 0 ] && echo "srun --eziotrace: all checks passed"
exit $((failures > 0))
