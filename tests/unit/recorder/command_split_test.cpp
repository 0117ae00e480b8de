// SPDX-License-Identifier: GPL-2.0-only
#include "app/command_split.h"

#include <gtest/gtest.h>

using ezio::app::split_command_line;

namespace {
const std::set<std::string> kValueOptions = {"-o", "--ring-buffer"};
}

TEST(CommandSplit, OptionsThenCommand) {
  auto s = split_command_line({"eziotrace", "record", "-o", "out", "-f", "ls", "-l", "-o", "x"}, 2,
                              kValueOptions);
  EXPECT_EQ(s.ours, (std::vector<std::string>{"eziotrace", "record", "-o", "out", "-f"}));
  EXPECT_EQ(s.command, (std::vector<std::string>{"ls", "-l", "-o", "x"}));
}

TEST(CommandSplit, DoubleDashEndsOptionsAndIsDropped) {
  auto s = split_command_line({"e", "record", "--", "-weird", "--", "b"}, 2, kValueOptions);
  EXPECT_EQ(s.ours, (std::vector<std::string>{"e", "record"}));
  EXPECT_EQ(s.command, (std::vector<std::string>{"-weird", "--", "b"}));
}

TEST(CommandSplit, NoCommand) {
  auto s = split_command_line({"e", "record", "-f"}, 2, kValueOptions);
  EXPECT_TRUE(s.command.empty());
  auto t = split_command_line({"e", "record", "-o"}, 2, kValueOptions);  // value missing
  EXPECT_EQ(t.ours.back(), "-o");
  EXPECT_TRUE(t.command.empty());
}
