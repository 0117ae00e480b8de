// SPDX-License-Identifier: GPL-2.0-only
// The probe plan kept between recordings (recorder/probe/kernel_cache.h) reads back as it was
// written.
#include "recorder/probe/probe_plan_json.h"

#include <gtest/gtest.h>

using namespace ezio::recorder;

namespace {

ProbePlan sample_plan() {
  ProbePlan p;
  p.layers[EZIO_LAYER_SYSCALL] = {true, "tp_btf/sys_enter+sys_exit", "exact"};
  p.layers[EZIO_LAYER_VFS] = {true, "kprobe/kretprobe vfs_read,vfs_write", "exact"};
  p.layers[EZIO_LAYER_BLOCK] = {false, "", "off"};
  p.vfs_hook = VfsHook::kprobe;
  p.programs = {"ezio_vfs_read_kprobe", "ezio_vfs_read_kretprobe"};
  p.trials = {{EZIO_LAYER_VFS, {"fentry/vfs_read", false, "Operation not supported"}},
              {EZIO_LAYER_VFS, {"kprobe/vfs_read", true, ""}}};
  p.tracepoints = {{"block_rq_issue", true}, {"block_getrq", false}};
  return p;
}

}  // namespace

TEST(ProbePlanJson, RoundTrip) {
  ProbePlan in = sample_plan();
  auto out = plan_from_json(nlohmann::json::parse(plan_to_json(in).dump()));
  ASSERT_TRUE(out);
  for (size_t l = 0; l < in.layers.size(); ++l) {
    EXPECT_EQ(out->layers[l].on, in.layers[l].on) << l;
    EXPECT_EQ(out->layers[l].hook, in.layers[l].hook) << l;
    EXPECT_EQ(out->layers[l].accuracy, in.layers[l].accuracy) << l;
  }
  EXPECT_EQ(out->vfs_hook, VfsHook::kprobe);
  EXPECT_FALSE(out->vfs_derived);
  EXPECT_EQ(out->programs, in.programs);
  ASSERT_EQ(out->trials.size(), 2u);
  EXPECT_EQ(out->trials[0].second.why, "Operation not supported");
  EXPECT_TRUE(out->trials[1].second.ok);
  EXPECT_EQ(out->tracepoints, in.tracepoints);
}

TEST(ProbePlanJson, DerivedVfsComesBackDerived) {
  ProbePlan in = sample_plan();
  in.vfs_hook = VfsHook::derived;
  auto out = plan_from_json(plan_to_json(in));
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->vfs_derived);
}

TEST(ProbePlanJson, OtherFormatsAndDamageAreRefused) {
  nlohmann::json j = plan_to_json(sample_plan());
  nlohmann::json other = j;
  other["format"] = 999;
  EXPECT_FALSE(plan_from_json(other));
  nlohmann::json no_programs = j;
  no_programs.erase("programs");
  EXPECT_FALSE(plan_from_json(no_programs));
  nlohmann::json bad_hook = j;
  bad_hook["vfs_hook"] = "teleport";
  EXPECT_FALSE(plan_from_json(bad_hook));
  nlohmann::json short_layers = j;
  short_layers["layers"].erase(0);
  EXPECT_FALSE(plan_from_json(short_layers));
  EXPECT_FALSE(plan_from_json(nlohmann::json::parse("not json", nullptr, false)));
  EXPECT_FALSE(plan_from_json(nlohmann::json::array()));
}
