// SPDX-License-Identifier: GPL-2.0-only
#include "converters/timeline/palette.h"

#include <array>
#include <string>

#include "common/schema/pagecache.h"

namespace ezio::converters {
namespace {

// Rows: [layer][read, write, sync, metadata], in Layer order (the timeline's rows). Families:
// HDF5 olive, MPI-IO pink, user teal, syscall blue, VFS orange, FS purple; writes darker than
// reads, syncs light, metadata pale, so that the kind reads the same in every layer.
constexpr std::array<std::array<Rgb, kOpKindCount>, 6> kCallColours = {{
    {{{158, 157, 36}, {85, 90, 20}, {212, 225, 87}, {240, 244, 195}}},
    {{{216, 27, 96}, {136, 14, 79}, {240, 98, 146}, {248, 187, 208}}},
    {{{0, 150, 136}, {0, 90, 80}, {77, 208, 196}, {178, 223, 219}}},
    {{{30, 136, 229}, {13, 60, 150}, {100, 181, 246}, {187, 222, 251}}},
    {{{251, 140, 0}, {191, 54, 12}, {255, 193, 7}, {255, 224, 178}}},
    {{{142, 36, 170}, {74, 20, 140}, {206, 147, 216}, {236, 210, 240}}},
}};

// Block: reads green, writes red, flushes brown; queued pale, in service strong.
constexpr std::array<Rgb, kBlockOpCount> kServiceColours = {
    {{46, 125, 50}, {198, 40, 40}, {93, 64, 55}}};
constexpr std::array<Rgb, kBlockOpCount> kQueuedColours = {
    {{165, 214, 167}, {239, 154, 154}, {188, 170, 164}}};

constexpr std::array<Rgb, kCacheVarCount> kVarColours = {
    {{46, 125, 50}, {198, 40, 40}, {255, 143, 0}, {96, 96, 96}}};

}  // namespace

std::string_view op_kind_name(OpKind k) {
  static constexpr std::array<std::string_view, kOpKindCount> names = {"read", "write", "sync",
                                                                       "metadata"};
  return names[static_cast<size_t>(k)];
}

OpKind op_kind_of(std::string_view name) {
  if (name.find("sync") != std::string_view::npos) return OpKind::kSync;
  switch (analysis::op_from_name(name)) {
    case analysis::Op::kRead:
      return OpKind::kRead;
    case analysis::Op::kWrite:
      return OpKind::kWrite;
    default:
      return OpKind::kMetadata;
  }
}

Rgb call_colour(analysis::Layer layer, OpKind kind) {
  size_t row = std::min<size_t>(static_cast<size_t>(layer), kCallColours.size() - 1);
  return kCallColours[row][static_cast<size_t>(kind)];
}

std::string_view block_op_name(BlockOp op) {
  static constexpr std::array<std::string_view, kBlockOpCount> names = {"read", "write", "flush"};
  return names[static_cast<size_t>(op)];
}

Rgb request_colour(BlockOp op, bool in_service) {
  return (in_service ? kServiceColours : kQueuedColours)[static_cast<size_t>(op)];
}

size_t cache_var_counter(CacheVar v) {
  static constexpr std::array<size_t, kCacheVarCount> counters = {1, 2, 6, 7};
  return counters[static_cast<size_t>(v)];
}

std::string_view cache_var_title(CacheVar v) {
  return schema::pagecache::kCounters[cache_var_counter(v)];
}

Rgb cache_var_colour(CacheVar v) { return kVarColours[static_cast<size_t>(v)]; }

}  // namespace ezio::converters
