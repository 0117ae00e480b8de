// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/decode/fs_events.h"

#include <array>

#include "record.h"

namespace ezio::recorder {

namespace {

enum class Direction { R, W, S };

struct FsOp {
  std::string_view name;
  Direction direction = Direction::S;
};

// Indexed by enum ezio_fs_op, from the one list in bpf/record.h.
constexpr auto fs_ops = [] {
  std::array<FsOp, EZIO_FS_OP_COUNT> ops{};
#define EZIO_FS_OP_ROW_(op, value, name, dir) ops[value] = FsOp{name, Direction::dir};
  EZIO_FS_OPS(EZIO_FS_OP_ROW_)
#undef EZIO_FS_OP_ROW_
  return ops;
}();

constexpr bool same(std::string_view a, std::string_view b) { return a == b; }

// The enum's values are the list's and EZIO_FS_OP_COUNT is past the last of them.
#define EZIO_FS_OP_CHECK_(op, value, name, dir) \
  static_assert(EZIO_FS_##op == (value) && (value) < EZIO_FS_OP_COUNT && !same(name, ""));
EZIO_FS_OPS(EZIO_FS_OP_CHECK_)
#undef EZIO_FS_OP_CHECK_

}  // namespace

std::string_view fs_op_name(uint16_t op) { return op < EZIO_FS_OP_COUNT ? fs_ops[op].name : ""; }

bool fs_op_reads(uint16_t op) {
  return op != EZIO_FS_NONE && op < EZIO_FS_OP_COUNT && fs_ops[op].direction == Direction::R;
}

bool fs_op_writes(uint16_t op) {
  return op != EZIO_FS_NONE && op < EZIO_FS_OP_COUNT && fs_ops[op].direction == Direction::W;
}

}  // namespace ezio::recorder
