# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_systemd_install (bash, as root, inside `run-in-vm.sh --systemd`:
# the host's own Debian root with its systemd as PID 1). `eziotrace service install` end to end
# under a real systemd: the group, the units, the socket systemd binds, socket activation of
# eziotraced on a user's first recording, the refusal of a user outside the group, a clean stop,
# and a second install (idempotent; a unit the administrator changed is kept without --force).
# Then, in the same boot, the always-on metrics' fentry path (guest-metrics-fentry.sh) and a
# user's own unit as the metrics name it (guest-metrics-user-unit.sh).
# eziotrace and eziotraced come in /ezio/bin (run-in-vm.sh) and are installed to $prefix, as a
# package would install them side by side.
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
# The guest must give up on any single step rather than hang until run-in-vm.sh's timeout.
limit() { timeout --kill-after=5 300 "$@"; }
show() { systemctl show -p "$2" --value "$1"; }

prefix=/opt/eziotrace/bin
sock=/run/eziotrace/eziotraced.sock
units=/etc/systemd/system
member=ezio_member outsider=ezio_outsider

echo "guest uptime when the test unit started: $(cut -d' ' -f1 /proc/uptime) s"
[ "$(cat /proc/1/comm)" = systemd ] || {
  bad "PID 1 is systemd (it is $(cat /proc/1/comm))"
  exit 1
}
ok "PID 1 is systemd ($(systemctl --version | head -n 1))"

install -D -m 755 "$EZIO_BIN/eziotrace" "$prefix/eziotrace"
install -D -m 755 "$EZIO_BIN/eziotraced" "$prefix/eziotraced"
# The host's /etc/group may already have the group (the host's tests make it): the guest's is a
# copy on the overlay, so it can be removed here and install must create it.
getent group eziotrace >/dev/null && groupdel eziotrace
for u in eziotraced.service eziotraced.socket; do rm -f "$units/$u"; done

# --- install -------------------------------------------------------------------------------------
out=$(limit "$prefix/eziotrace" service install 2>&1)
rc=$?
echo "$out" | sed 's/^/  | /'
check "service install exits 0" [ $rc -eq 0 ]
check "install says it created group eziotrace" contains "$out" "created group eziotrace"
for u in service socket; do
  check "install says it installed eziotraced.$u" contains "$out" "installed $units/eziotraced.$u"
done
check "install says the socket is enabled and started" contains "$out" "eziotraced.socket enabled and started"
check "group eziotrace exists" eval "getent group eziotrace >/dev/null"
check "ExecStart names the eziotraced beside eziotrace" \
  grep -qx "ExecStart=$prefix/eziotraced --foreground" "$units/eziotraced.service"
check "eziotraced.socket is enabled" [ "$(systemctl is-enabled eziotraced.socket)" = enabled ]
check "eziotraced.socket is active" [ "$(systemctl is-active eziotraced.socket)" = active ]
check "eziotraced.service is not started before the first connection" \
  [ "$(systemctl is-active eziotraced.service)" = inactive ]
check "no unit needs a daemon-reload" [ "$(show eziotraced.service NeedDaemonReload)$(show eziotraced.socket NeedDaemonReload)" = nono ]
check "$sock: a socket, root:eziotrace 0660 ($(stat -c '%U:%G %a' $sock))" \
  test -S $sock -a "$(stat -c '%U:%G %a' $sock)" = "root:eziotrace 660"
check "/run/eziotrace: root 0755 ($(stat -c '%U %a' /run/eziotrace))" \
  [ "$(stat -c '%U %a' /run/eziotrace)" = "root 755" ]

# --- a member of the group records through the socket-activated service -------------------------
made() {  # made USER OPTIONS...: useradd, said with its words when it fails
  local user=$1 out
  shift
  if out=$(useradd -m "$@" "$user" 2>&1); then ok "useradd $user"; else bad "useradd $user: $out"; fi
}
made $member -G eziotrace
made $outsider
as_user() {  # as_user USER COMMAND...: in USER's home, with USER's groups and environment
  local user=$1
  shift
  (cd "/home/$user" && limit setpriv --reuid="$user" --regid="$user" --init-groups --reset-env "$@")
}
workload=(dd if=/dev/zero of=data bs=64k count=16 conv=fsync)
out=$(as_user $member "$prefix/eziotrace" record -o rec -- "${workload[@]}" 2>&1)
rc=$?
echo "$out" | sed 's/^/  | /'
check "$member's recording exits 0" [ $rc -eq 0 ]
archive=/home/$member/rec/eziotrace.otf2
check "the archive belongs to $member" [ "$(stat -c %U "$archive" 2>&1)" = $member ]
path=$(otf2-print -G "$archive" 2>/dev/null |
  sed -n 's/.*Name: "EZIOTRACE::RECORDING_PATH".*Value: "\([^"]*\)".*/\1/p')
check "the archive says RECORDING_PATH eziotraced ($path)" [ "$path" = eziotraced ]
writes=$("$prefix/eziotrace" layers --json "$archive" 2>/dev/null |
  /usr/bin/python3 -c 'import json,sys; print(next(r["writes"] for r in json.load(sys.stdin)["layers"] if r["layer"] == "Syscall"))')
check "the archive holds dd's 16 writes (syscall layer: ${writes:-none})" [ "${writes:-0}" -ge 16 ]
check "eziotraced.service was started by the connection" \
  [ "$(systemctl is-active eziotraced.service)" = active ]
pid=$(show eziotraced.service MainPID)
check "systemd started it: $prefix/eziotraced, child of PID 1" \
  [ "$(readlink /proc/$pid/exe) $(awk '/^PPid:/ {print $2}' /proc/$pid/status)" = "$prefix/eziotraced 1" ]
check "it serves the socket systemd passed (TriggeredBy eziotraced.socket)" \
  [ "$(show eziotraced.service TriggeredBy)" = eziotraced.socket ]
# The service's first start probes the kernel and writes the probe cache into /run/eziotrace.
check "the socket is still there once the service runs" [ -S $sock ]
out=$(as_user $member "$prefix/eziotrace" service status 2>&1)
check "service status as $member: $out" contains "$out" "0 session(s) open"

# --- a user outside the group is refused clearly --------------------------------------------------
out=$(as_user $outsider "$prefix/eziotrace" record -o rec -- "${workload[@]}" 2>&1)
rc=$?
echo "$out" | sed 's/^/  | /'
check "$outsider's recording fails (status $rc, 1..127)" test $rc -ge 1 -a $rc -le 127
check "the refusal says why: not in group eziotrace" \
  contains "$out" "you are not in group eziotrace: recording through eziotraced"
check "no archive for $outsider" [ ! -e /home/$outsider/rec ]

# --- stopping leaves no program of eziotraced attached --------------------------------------------
progs=$(grep -h '^prog_id:' /proc/$pid/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un)
links=$(grep -h '^link_id:' /proc/$pid/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un)
# Idle, its programs are loaded but not attached (only while a session needs them).
check "eziotraced holds BPF programs ($(echo $progs | wc -w)), idle no links ($(echo $links | wc -w))" \
  test -n "$progs" -a -z "$links"
check "systemctl stop eziotraced.service eziotraced.socket" \
  limit systemctl stop eziotraced.service eziotraced.socket
check "both inactive, the service's result success ($(show eziotraced.service Result))" \
  [ "$(systemctl is-active eziotraced.service eziotraced.socket | tr '\n' ' ')$(show eziotraced.service Result)" = "inactive inactive success" ]
check "the socket file is gone (RemoveOnStop)" [ ! -e $sock ]
remaining() {  # the ids of $progs and $links that the kernel still has
  local id
  for id in $progs; do bpftool prog show id "$id" >/dev/null 2>&1 && echo "prog $id"; done
  for id in $links; do bpftool link show id "$id" >/dev/null 2>&1 && echo "link $id"; done
}
command -v bpftool >/dev/null || bad "bpftool on the host's root (needed to see programs go)"
# The kernel frees a link's program after the tracepoint's own grace period: wait for it.
left=$(remaining)
for _ in $(seq 1 20); do
  [ -z "$left" ] && break
  sleep 0.5
  left=$(remaining)
done
check "none of its programs or links remain (bpftool: ${left:-none})" [ -z "$left" ]

# --- install again: idempotent; a changed unit is kept without --force -----------------------------
before=$(stat -c '%Y %s' $units/eziotraced.service $units/eziotraced.socket | tr '\n' ' ')
sleep 1.1  # a rewrite would show in the mtime
out=$(limit "$prefix/eziotrace" service install 2>&1)
rc=$?
echo "$out" | sed 's/^/  | /'
check "a second install exits 0" [ $rc -eq 0 ]
check "it rewrote no unit (mtimes and sizes kept)" \
  [ "$(stat -c '%Y %s' $units/eziotraced.service $units/eziotraced.socket | tr '\n' ' ')" = "$before" ]
check "it says nothing about installing a unit or a group, nor about a restart" \
  eval '! contains "$out" installed && ! contains "$out" "created group" && ! contains "$out" restart'
check "the socket is active again" [ "$(systemctl is-active eziotraced.socket)" = active ]

# An administrator's change, applied: the socket for root alone.
sed -i 's/^SocketMode=0660$/SocketMode=0600/' $units/eziotraced.socket
systemctl daemon-reload
limit systemctl restart eziotraced.socket
check "the changed socket unit is in force (mode $(stat -c %a $sock))" [ "$(stat -c %a $sock)" = 600 ]
changed=$(cat $units/eziotraced.socket)
out=$(limit "$prefix/eziotrace" service install 2>&1)
rc=$?
echo "$out" | sed 's/^/  | /'
check "install over a changed unit without --force exits non-zero ($rc, 1..127)" \
  test $rc -ge 1 -a $rc -le 127
check "it says it keeps the changed unit" \
  contains "$out" "$units/eziotraced.socket exists with other content: not replacing it"
check "the changed unit is kept" [ "$(cat $units/eziotraced.socket)" = "$changed" ]
out=$(limit "$prefix/eziotrace" service install --force 2>&1)
rc=$?
echo "$out" | sed 's/^/  | /'
check "install --force exits 0 ($rc)" [ $rc -eq 0 ]
check "it says it replaced the unit" contains "$out" "installed $units/eziotraced.socket"
check "the unit is the packaged one again" grep -qx "SocketMode=0660" $units/eziotraced.socket
check "no unit needs a daemon-reload" [ "$(show eziotraced.service NeedDaemonReload)$(show eziotraced.socket NeedDaemonReload)" = nono ]
# systemd keeps a listening socket as it was bound: install must say that a restart applies it.
check "the running socket keeps its former mode ($(stat -c %a $sock))" [ "$(stat -c %a $sock)" = 600 ]
check "install says the socket keeps its former settings until restarted" \
  contains "$out" "eziotraced.socket was running: it keeps its former settings until \`systemctl restart eziotraced.socket\`"
limit systemctl restart eziotraced.socket
check "restarted, the socket has the packaged mode ($(stat -c '%G %a' $sock))" \
  [ "$(stat -c '%G %a' $sock)" = "eziotrace 660" ]

# --- the service again, and after a crash ---------------------------------------------------------
record_again() {  # record_again NAME: the member records once more, through the service
  local out rc
  out=$(as_user $member "$prefix/eziotrace" record -o "$1" -- "${workload[@]}" 2>&1)
  rc=$?
  [ $rc -eq 0 ] || echo "$out" | sed 's/^/  | /'
  [ $rc -eq 0 ] && [ "$(otf2-print -G "/home/$member/$1/eziotrace.otf2" 2>/dev/null |
    sed -n 's/.*Name: "EZIOTRACE::RECORDING_PATH".*Value: "\([^"]*\)".*/\1/p')" = eziotraced ]
}
check "after the reinstall, $member records through a newly started eziotraced" record_again rec2
pid=$(show eziotraced.service MainPID)
kill -KILL "$pid"
# Restart=on-failure: systemd starts it again at once (socket still listening).
for _ in $(seq 1 60); do
  [ "$(show eziotraced.service NRestarts)" = 1 ] && [ "$(systemctl is-active eziotraced.service)" = active ] && break
  sleep 0.5
done
check "killed (SIGKILL), eziotraced is restarted by systemd (NRestarts $(show eziotraced.service NRestarts))" \
  [ "$(show eziotraced.service NRestarts) $(systemctl is-active eziotraced.service)" = "1 active" ]
check "the socket file outlives the crash" [ -S $sock ]
check "$member records through the restarted eziotraced" record_again rec3

# --- the always-on metrics: fentry chosen where it attaches, exact; the tracepoint path the same ---
# shellcheck source=guest-metrics-fentry.sh
. "$EZIO_FILES/guest-metrics-fentry.sh"
# --- a user's own unit named as systemd names it --------------------------------------------------
# shellcheck source=guest-metrics-user-unit.sh
. "$EZIO_FILES/guest-metrics-user-unit.sh"

if [ $failed -ne 0 ]; then
  echo "--- journal of eziotraced"
  journalctl --no-pager -u eziotraced.service -u eziotraced.socket | tail -n 40
fi
echo "guest uptime at the end: $(cut -d' ' -f1 /proc/uptime) s"
[ $failed -eq 0 ] && echo "qemu systemd install: all checks passed"
exit $failed
