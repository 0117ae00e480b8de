# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_flight_slurm (bash, root, inside `run-in-vm.sh --systemd`: the
# host's Debian root under its systemd, the unified cgroup hierarchy). A real Slurm 22.05 node with
# proctrack/cgroup and the cgroup/v2 plugin, and eziotraced --flight-slurm: a job of user
# ezio_sa appears as Slurm's job_<id> cgroup and is flight-recorded with ezio_sa as its owner
# (from scontrol); its snapshot by ezio_sa holds the file the job wrote and only ezio_sa's
# processes (not root's slurmstepd in the job's cgroups, nor a root dd put into its task cgroup);
# ezio_sb is refused; the job's end frees its session slot. docs/flight-recorder.md, Tested.
set -u
failed=0
ok() { echo "ok   - $*"; }
bad() {
  echo "FAIL - $*"
  failed=1
}
check() {  # check DESCRIPTION COMMAND...
  local desc=$1
  shift
  if "$@"; then ok "$desc"; else bad "$desc"; fi
}
contains() { case "$1" in *"$2"*) return 0 ;; *) return 1 ;; esac; }
die() {  # a precondition is missing: the test fails loudly
  echo "FAIL - $*"
  echo "--- Slurm's cgroups; slurmd's: $(cat /proc/$(pidof slurmd | cut -d' ' -f1)/cgroup 2>&1)"
  find /sys/fs/cgroup -type d \( -name '*slurm*' -o -name 'job_*' \) 2>&1 | head -n 30
  for f in /var/log/slurm/*.log /tmp/eziotraced.log; do [ -e "$f" ] && { echo "--- $f"; tail -n 25 "$f"; }; done
  exit 1
}
# waits up to $1 s for the command; no time is asserted, the limit only ends a hang
wait_for() {
  local end=$((SECONDS + $1))
  shift
  while [ $SECONDS -lt $end ]; do
    "$@" && return 0
    sleep 0.5
  done
  return 1
}
# No step may hang until run-in-vm.sh's timeout: each is bounded, and said before it starts.
t() {  # t SECONDS COMMAND...
  local s=$1
  shift
  echo "step: $*" >&2
  timeout --kill-after=5 "$s" "$@"
}
as() {  # as SECONDS USER COMMAND...: a login-like environment, as Slurm's users have
  local s=$1 u=$2
  shift 2
  echo "step: as $u: $*" >&2
  timeout --kill-after=5 "$s" setpriv --reuid="$u" --regid="$u" --init-groups env -i HOME="/home/$u" USER="$u" LOGNAME="$u" \
    PATH="$EZIO_BIN:/usr/bin:/bin:/usr/sbin:/sbin" "$@"
}
ua=ezio_sa ub=ezio_sb
scope=/sys/fs/cgroup/system.slice/slurmstepd.scope
disk=/mnt/disk

[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || die "/sys/fs/cgroup is not cgroup v2"
for t in slurmctld slurmd scontrol sbatch munged; do command -v $t >/dev/null || die "$t missing"; done

# --- users, munge, eziotraced, Slurm -------------------------------------------------------------
getent group eziotrace >/dev/null || groupadd eziotrace || die "groupadd eziotrace"
for u in $ua $ub; do
  id $u >/dev/null 2>&1 || useradd -m -U -G eziotrace -s /bin/bash $u || die "useradd $u"
done
mkdir -p $disk/$ua && chown $ua: $disk/$ua
# The guest has no network card: Slurm's daemons talk over the loopback.
# An address of its own beside 127.0.0.1: the daemons resolve with AI_ADDRCONFIG, which a node
# with no address but the loopback's fails ("Unable to resolve \"(null)\"").
ip link set lo up && ip addr add 10.77.0.1/32 dev lo || die "no address on lo"
hostname ezionode && echo "10.77.0.1 ezionode" >> /etc/hosts || die "no host name"
echo "addresses: $(ip -4 -o addr | awk '{print $2, $4}' | tr '\n' ' '); ezionode is $(getent hosts ezionode)"
t 60 systemctl start munge.service || die "munge did not start"
mkdir -p /etc/slurm /var/spool/slurmd /var/spool/slurmctld /var/log/slurm
echo "step: eziotraced --flight-slurm"
"$EZIO_BIN/eziotraced" --foreground --flight-slurm --flight-seconds 600 > /tmp/eziotraced.log 2>&1 &
daemon=$!
wait_for 120 grep -q ready /tmp/eziotraced.log || die "eziotraced did not start"
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=ezio
SlurmctldHost=ezionode
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/cgroup
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
SlurmdTimeout=300
MessageTimeout=60
KillWait=5
NodeName=ezionode CPUs=$(nproc) RealMemory=256 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
# slurmd is started outside a unit and this boot runs no D-Bus: Slurm makes its scope itself.
printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' > /etc/slurm/cgroup.conf
t 60 slurmctld || die "slurmctld did not start"
t 60 slurmd || die "slurmd did not start"
idle() { timeout -k 2 10 sinfo -h -o '%T' 2>/dev/null | grep -qx idle; }
echo "step: waiting for the node to be idle in Slurm"
wait_for 180 idle || die "the node is not idle in Slurm: $(timeout 10 sinfo -N 2>&1)"
ok "Slurm is up with proctrack/cgroup and cgroup/v2"
# Where slurmd made its step daemons' scope: Slurm's documented one, or (Debian's Slurm, built with
# --enable-multiple-slurmd) one named after the node: --flight-slurm without a value watches either.
found=$(find /sys/fs/cgroup -maxdepth 3 -type d -name '*slurmstepd*.scope' | head -n 1)
echo "slurmd's scope: ${found:-none}; slurmd's cgroup: $(cat /proc/$(pidof slurmd | cut -d' ' -f1)/cgroup)"
case $found in
  $scope | /sys/fs/cgroup/system.slice/ezionode_slurmstepd.scope) ok "slurmd's scope is one --flight-slurm looks for: $found" ;;
  *) bad "slurmd's scope is one --flight-slurm looks for (it is ${found:-none})" ;;
esac
scope=${found:-$scope}
wait_for 30 grep -q "watching $scope" /tmp/eziotraced.log
check "eziotraced, started before slurmd, watches $scope" grep -q "watching $scope" /tmp/eziotraced.log

# --- a job of ezio_sa ------------------------------------------------------------------------------
out=$disk/$ua
# The job writes once eziotraced lists it (to its user): a job's first moments, before scontrol
# answered, are not recorded (docs/flight-recorder.md, Not done), and the test is not a race.
listed='until eziotrace service status 2>/dev/null | grep -q "job_$SLURM_JOB_ID "; do sleep 0.2; done'
job=$(cd $out && as 60 $ua sbatch --parsable -o $out/job.out --wrap \
  "$listed; dd if=/dev/zero of=$out/flight_known.bin bs=4096 count=16 conv=fsync; touch $out/written; sleep 600")
[[ "$job" =~ ^[0-9]+$ ]] || die "sbatch gave no job id: $job"
echo "step: waiting for job $job's writes"
wait_for 180 test -e $out/written || die "job $job did not write (state: $(t 10 squeue -h -j $job -o %T))"
echo "Slurm's cgroups of job $job:"
find /sys/fs/cgroup -type d -path "*job_$job*" | sed 's/^/  | /'
check "Slurm 22.05 made $scope/job_$job" test -d $scope/job_$job
check "eziotraced added job $job with its user as owner" \
  grep -q "job ${scope#/sys/fs/cgroup}/job_$job .*${ua}'s" /tmp/eziotraced.log
# root in the job's task cgroup: neither it nor root's slurmstepd (in job_<id>/step_*/slurm) is
# ezio_sa's, so neither may enter the job's records.
task=$(find $scope/job_$job -type d -name 'task_*' | head -n 1)
[ -n "$task" ] || die "no task_* cgroup under job_$job"
sh -c "echo \$\$ > $task/cgroup.procs && exec dd if=/dev/zero of=$out/root_in_job.bin bs=4096 count=4" 2>/dev/null
check "root's dd ran in the job's task cgroup" test -s $out/root_in_job.bin
status=$(t 30 "$EZIO_BIN/eziotrace" service status 2>&1)
echo "$status" | sed 's/^/  | /'
check "service status lists the Slurm job" contains "$status" "job_$job (${ua}'s)"
check "service status counts the Slurm job added" contains "$status" "1 flight-recorded, 1 added"

# --- snapshots -------------------------------------------------------------------------------------
snap=$(cd $out && as 120 $ua eziotrace snapshot --job $job -o $out/snap 2>&1)
rc=$?
echo "$snap" | sed 's/^/  | /'
check "ezio_sa's snapshot of Slurm job $job exits 0" [ $rc -eq 0 ]
/usr/bin/python3 - "$out/snap/eziotrace.otf2" "$EZIO_FILES/otf2_dump.py" > /tmp/summary.txt <<'PY'
import json, os, subprocess, sys
d = json.loads(subprocess.run(["/usr/bin/python3", sys.argv[2], sys.argv[1]], check=True,
                              capture_output=True, text=True).stdout)
names, files = set(), set()
for loc in d["locations"].values():
    names.add(str(loc.get("group", "")).replace(" ", "_"))
    for c in loc.get("calls", []):
        for io in c.get("io", []):
            if "file" in io:
                files.add(os.path.basename(io["file"]))
print("names", " ".join(sorted(names)))
print("files", " ".join(sorted(files)))
print("job", d["properties"].get("EZIOTRACE::SNAPSHOT_JOB", ""))
PY
sed 's/^/  | /' /tmp/summary.txt
files=$(sed -n 's/^files //p' /tmp/summary.txt)
names=$(sed -n 's/^names //p' /tmp/summary.txt)
check "the snapshot holds the job's writes of flight_known.bin" contains " $files " " flight_known.bin "
check "the snapshot holds no root dd of the job's cgroup" eval '! contains " $files " " root_in_job.bin "'
check "the snapshot holds no slurmstepd (root's)" eval '! contains " $names " "slurmstepd"'
check "the snapshot names the Slurm job" grep -q "^job .*job_$job" /tmp/summary.txt
check "the archive is ezio_sa's" [ "$(stat -c %U $out/snap)" = $ua ]
refused=$(cd /tmp && as 60 $ub eziotrace snapshot --job $job -o /tmp/sb_snap 2>&1)
rc=$?
echo "$refused" | sed 's/^/  | /'
check "ezio_sb's snapshot is refused" [ $rc -ne 0 ]
check "the refusal says whose job it is" contains "$refused" "is ${ua}'s: only its owner and root"

# --- the job's end ---------------------------------------------------------------------------------
t 30 scancel $job
wait_for 120 test ! -d $scope/job_$job || die "job_$job's cgroup stayed after scancel"
ended() { grep -q "job ${scope#/sys/fs/cgroup}/job_$job ended" /tmp/eziotraced.log; }
check "eziotraced removed job $job when its cgroup went (its slot freed)" wait_for 60 ended
status=$(t 30 "$EZIO_BIN/eziotrace" service status 2>&1)
echo "$status" | sed 's/^/  | /'
check "no flight-recorded job is left" eval '! contains "$status" "flight-recorded job"'
check "service status counts it ended" contains "$status" "0 flight-recorded, 1 added, 1 ended"
gone=$(as 60 $ua eziotrace snapshot --job $job -o $out/snap2 2>&1)
check "a snapshot of the ended job is refused, naming it" contains "$gone" "flight-records no job $job"

kill -TERM $daemon
wait $daemon
echo "--- eziotraced's log"
sed 's/^/  | /' /tmp/eziotraced.log
exit $failed
