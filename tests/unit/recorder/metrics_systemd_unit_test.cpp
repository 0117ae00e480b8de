// SPDX-License-Identifier: GPL-2.0-only
// The systemd unit and slice of a cgroup path (what names a job that is not Slurm's), over paths
// as systemd, Slurm, docker, containerd and kubelet make them; then through the exposition and
// back through `eziotrace top`'s parser and table.
#include <gtest/gtest.h>

#include "recorder/metrics/exposition.h"
#include "recorder/metrics/systemd_unit.h"
#include "recorder/metrics/top_jobs.h"

namespace ezio::recorder::metrics {
namespace {

void expect_place(const std::string& path, const std::string& unit, const std::string& slice,
                  const std::string& user_unit = "") {
  SystemdPlace p = systemd_place(path);
  EXPECT_EQ(p.unit, unit) << path;
  EXPECT_EQ(p.slice, slice) << path;
  EXPECT_EQ(p.user_unit, user_unit) << path;
}

TEST(MetricsSystemdUnit, ServicesAndSessions) {
  expect_place("/system.slice/cron.service", "cron.service", "system.slice");
  expect_place("/user.slice/user-1000.slice/session-3.scope", "session-3.scope", "user-1000.slice");
  expect_place("/system.slice/getty@tty1.service", "getty@tty1.service", "system.slice");
  // A user manager's own units belong to it, as systemd reads the path.
  expect_place("/user.slice/user-1000.slice/user@1000.service/app.slice/dbus.socket",
               "user@1000.service", "user-1000.slice", "dbus.socket");
  expect_place("/init.scope", "init.scope", "-.slice");
}

TEST(MetricsSystemdUnit, AUserManagersOwnUnitsAreReadBelowIt) {
  // systemd-run --user, a desktop's apps, a user's own services: the user's unit, as journald's
  // _SYSTEMD_USER_UNIT names it, whatever the user's slices hold it.
  expect_place("/user.slice/user-1000.slice/user@1000.service/app.slice/app-firefox@a1.scope",
               "user@1000.service", "user-1000.slice", "app-firefox@a1.scope");
  expect_place(
      "/user.slice/user-1000.slice/user@1000.service/app.slice/app-x.slice/run-u7.service/sub",
      "user@1000.service", "user-1000.slice", "run-u7.service");
  // The manager's own process, its init.scope, and its slices alone.
  expect_place("/user.slice/user-1000.slice/user@1000.service/init.scope", "user@1000.service",
               "user-1000.slice", "init.scope");
  expect_place("/user.slice/user-1000.slice/user@1000.service/app.slice", "user@1000.service",
               "user-1000.slice", "");
  expect_place("/user.slice/user-1000.slice/user@1000.service", "user@1000.service",
               "user-1000.slice", "");
  // A system service that only looks like a manager below is not read below.
  expect_place("/system.slice/users.service/app.slice/x.service", "users.service", "system.slice",
               "");
  expect_place("/system.slice/user@.service/x.service", "", "");  // a template runs nothing
}

TEST(MetricsSystemdUnit, SlurmAndContainers) {
  // Slurm's step is in slurmstepd's scope (the collector names it by job_id instead).
  expect_place("/system.slice/slurmstepd.scope/job_42/step_0/user/task_0", "slurmstepd.scope",
               "system.slice");
  expect_place("/system.slice/docker-4f1c2d9e8a7b.scope", "docker-4f1c2d9e8a7b.scope",
               "system.slice");
  expect_place("/system.slice/containerd.service/k8s.io/8d2e", "containerd.service",
               "system.slice");
  expect_place(
      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b_3c4d.slice/"
      "cri-containerd-77aa.scope",
      "cri-containerd-77aa.scope", "kubepods-burstable-pod1a2b_3c4d.slice");
  expect_place("/docker/4f1c2d9e8a7b", "", "");  // docker's cgroupfs driver: no systemd
  expect_place("/machine/qemu-1-vm.libvirt-qemu", "", "");
}

TEST(MetricsSystemdUnit, RootSlicesAloneAndOddNames) {
  expect_place("/", "", "");
  expect_place("", "", "");
  expect_place("/user.slice/user-1000.slice", "", "");  // slices hold no process
  expect_place("/ezio_metrics_42", "", "");
  expect_place("/a.slice/b.timer", "", "");  // a timer runs nothing
  expect_place("/system.slice/@.service", "", "");
  expect_place("/system.slice/getty@.service", "", "");  // a template runs nothing
  expect_place("/system.slice/a b.service", "", "");
  // Nested slices: the innermost holds the unit.
  expect_place("//app.slice/app-web.slice/app-web-nginx.slice/nginx.service/", "nginx.service",
               "app-web-nginx.slice");
}

TEST(MetricsSystemdUnit, EscapesAreSystemds) {
  // \x2d is part of the unit's name (systemctl takes it so): kept.
  expect_place(
      "/system.slice/system-systemd\\x2dfsck.slice/"
      "systemd-fsck@dev-disk-by\\x2duuid-12ab.service",
      "systemd-fsck@dev-disk-by\\x2duuid-12ab.service", "system-systemd\\x2dfsck.slice");
  // The '_' systemd adds before a name that would clash with cgroupfs' files is not.
  expect_place("/system.slice/_cgroup.service", "cgroup.service", "system.slice");
  expect_place("/_tasks.slice/x.service", "x.service", "tasks.slice");
}

// A job's series of write calls: its bytes, its cgroup path and the user.
NamedSeries writes_of(const std::string& cgroup, uint64_t bytes, const std::string& user) {
  NamedSeries n;
  n.s.key.cgroup = 9;
  n.s.key.op = EZIO_M_SC_WRITE;
  n.s.value.count = 1;
  n.s.value.bytes = bytes;
  n.cgroup = cgroup;
  n.user = user;
  return n;
}

TEST(MetricsSystemdUnit, LabelsInTheExpositionAndTop) {
  Snapshot s;
  NamedSeries n =
      writes_of("/system.slice/system-x\\x2dy.slice/x\\x2dy@1.service/sub", 4096, "root");
  n.unit = "x\\x2dy@1.service";
  n.slice = "system-x\\x2dy.slice";
  s.series.push_back(n);
  std::string text = expose(s, Format::kOpenMetrics);
  EXPECT_NE(text.find("eziotrace_syscall_bytes_total{cgroup=\"/system.slice/system-x\\\\x2dy.slice/"
                      "x\\\\x2dy@1.service/sub\",unit=\"x\\\\x2dy@1.service\",slice=\"system-x\\\\"
                      "x2dy.slice\",user=\"root\",op=\"write\"} 4096\n"),
            std::string::npos)
      << text;
  NodeSample before = parse_exposition("", 0);
  NodeSample now = parse_exposition(text, 1);
  ASSERT_EQ(now.jobs.size(), 1u);
  const JobTotals& job = now.jobs.begin()->second;
  EXPECT_EQ(job.unit, n.unit);
  EXPECT_EQ(job.slice, n.slice);
  std::vector<JobView> v = job_views(before, now, "io");
  // The job is named from its unit on, the path below it kept.
  EXPECT_NE(format_table(v, "t", 0).find("\nx\\x2dy@1.service/sub "), std::string::npos)
      << format_table(v, "t", 0);
  nlohmann::json j = frame_json(v, "src", 1, 5);
  EXPECT_EQ(j["jobs"][0]["unit"], n.unit);
  EXPECT_EQ(j["jobs"][0]["slice"], n.slice);
  EXPECT_FALSE(j["jobs"][0].contains("job_id"));
  EXPECT_FALSE(j["jobs"][0].contains("user_unit"));
}

TEST(MetricsSystemdUnit, TheUsersOwnUnitInTheExpositionAndTop) {
  Snapshot s;
  NamedSeries n = writes_of(
      "/user.slice/user-1000.slice/user@1000.service/app.slice/run-u7.service", 10, "ann");
  SystemdPlace p = systemd_place(n.cgroup);
  n.unit = p.unit;
  n.slice = p.slice;
  n.user_unit = p.user_unit;
  s.series.push_back(n);
  std::string text = expose(s, Format::kOpenMetrics);
  EXPECT_NE(text.find(",unit=\"user@1000.service\",slice=\"user-1000.slice\",user_unit=\"run-"
                      "u7.service\",user=\"ann\",op=\"write\"} 10\n"),
            std::string::npos)
      << text;
  NodeSample now = parse_exposition(text, 1);
  ASSERT_EQ(now.jobs.size(), 1u);
  std::vector<JobView> v = job_views(parse_exposition("", 0), now, "io");
  nlohmann::json j = frame_json(v, "src", 1, 5);
  EXPECT_EQ(j["jobs"][0]["user_unit"], "run-u7.service");
  EXPECT_EQ(j["jobs"][0]["unit"], "user@1000.service");
}

}  // namespace
}  // namespace ezio::recorder::metrics
