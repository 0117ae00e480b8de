# SPDX-License-Identifier: GPL-2.0-only
# Sourced by guest-systemd-install.sh (a real systemd as PID 1): a user's own unit, run by the
# user's manager (user@UID.service, started as logind starts it for a lingering user), is named in
# the metrics as systemd names it: unit="user@UID.service", user_unit="<the unit>.service", with
# the user's exact bytes. Uses check, ok, bad, limit, $prefix, $member of the sourcing script.
uu_dir=$(mktemp -d /tmp/ezio-uu.XXXXXX)
chmod 755 "$uu_dir"
uu_port=9468
uu_uid=$(id -u $member)
uu_unit=ezio-user-dd

"$prefix/eziotraced" --foreground --socket "$uu_dir/sock" --group root --metrics $uu_port \
  --metrics-layers syscall,vfs >"$uu_dir/out" 2>"$uu_dir/err" &
uu_pid=$!
for _ in $(seq 1 120); do grep -q ready "$uu_dir/out" && break; sleep 0.5; done
check "eziotraced --metrics starts (user units)" grep -q "eziotraced: ready" "$uu_dir/out"

# uu_manager_up: the user's manager is running (its private socket is there).
uu_manager_up() { [ "$(systemctl is-active user@$uu_uid.service)" = active ] && [ -S /run/user/$uu_uid/systemd/private ]; }
# The test boot reaches only ezio-test.target: the system bus and logind, which start a lingering
# user's manager, are started here.
uu_out=$(limit systemctl start dbus.socket dbus.service systemd-logind.service 2>&1)
check "the system bus and logind start${uu_out:+ ($uu_out)}" \
  [ "$(systemctl is-active dbus.service)$(systemctl is-active systemd-logind.service)" = activeactive ]
uu_out=$(limit loginctl enable-linger $member 2>&1)
for _ in $(seq 1 240); do uu_manager_up && break; sleep 0.5; done
check "loginctl enable-linger $member starts user@$uu_uid.service${uu_out:+ ($uu_out)}" uu_manager_up
uu_manager_up || systemctl status --no-pager dbus.socket dbus.service systemd-logind.service \
  user-runtime-dir@$uu_uid.service user@$uu_uid.service 2>&1 | tail -n 60 | sed 's/^/  | /'
out=$(cd "/home/$member" && limit setpriv --reuid=$member --regid=$member --init-groups \
  env XDG_RUNTIME_DIR=/run/user/$uu_uid systemd-run --user --wait --quiet --unit=$uu_unit \
  dd if=/dev/zero of="/home/$member/uu-data" bs=4096 count=250 status=none 2>&1)
rc=$?
check "systemd-run --user --wait dd as $member exits 0 ($rc${out:+: $out})" [ $rc -eq 0 ]
limit curl -sf "http://127.0.0.1:$uu_port/metrics" >"$uu_dir/scrape"
uu_line=$(grep "^eziotrace_syscall_bytes_total{.*user_unit=\"$uu_unit.service\".*op=\"write\"}" "$uu_dir/scrape")
echo "$uu_line" | sed 's/^/  | /'
check "the series names the user's manager as its unit" \
  contains "$uu_line" "unit=\"user@$uu_uid.service\",slice=\"user-$uu_uid.slice\",user_unit=\"$uu_unit.service\""
check "its cgroup is the user unit's (…/user@$uu_uid.service/app.slice/$uu_unit.service)" \
  contains "$uu_line" "/user@$uu_uid.service/app.slice/$uu_unit.service\""
check "it is $member's" contains "$uu_line" "user=\"$member\""
# The unit's system calls include what systemd's executor writes in the unit's cgroup before it
# execs dd (procfs settings: 24 bytes here); on the home's file system, dd's bytes alone.
uu_fstype=$(findmnt -no FSTYPE --target "/home/$member")
uu_bytes=$(awk -v uu="user_unit=\"$uu_unit.service\"" -v fs="fstype=\"$uu_fstype\"" \
  'index($0, "eziotrace_vfs_bytes_total{") == 1 && index($0, uu) && index($0, fs) &&
   index($0, "op=\"write\"") { s += $NF } END { print s + 0 }' "$uu_dir/scrape")
check "its VFS bytes written on $uu_fstype are dd's 1024000 ($uu_bytes)" [ "$uu_bytes" = 1024000 ]
limit loginctl disable-linger $member
kill -TERM $uu_pid
wait $uu_pid
[ $failed -eq 0 ] || sed 's/^/  | /' "$uu_dir/err" | tail -n 20
rm -rf "$uu_dir" "/home/$member/uu-data"
