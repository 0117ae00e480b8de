// SPDX-License-Identifier: GPL-2.0-only
// `srun --eziotrace=VALUE ...` without Slurm (converters/cluster/spank/spank_command.h): the
// option's value, srun's command line rewritten into eziotrace's, and the variables through which
// Slurm would hand the option to the inner srun.
#include "converters/cluster/spank/spank_command.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace ezio::converters {
namespace {

using Words = std::vector<std::string>;

Words command(const Words& srun, std::string_view value) {
  return spank_eziotrace_command("/usr/bin/eziotrace", srun, parse_spank_value(value));
}

TEST(SpankCommand, ADirectoryIsTheRecordCommandOfTheSameSrunLine) {
  EXPECT_EQ(
      command({"srun", "--eziotrace=out", "-N", "2", "./app", "x"}, "out"),
      (Words{"/usr/bin/eziotrace", "record", "-o", "out", "--", "srun", "-N", "2", "./app", "x"}));
}

TEST(SpankCommand, TheValueMayBeTheNextWord) {
  // has_arg 1: getopt_long takes `--eziotrace DIR` too; the value goes with the option.
  EXPECT_EQ(srun_without_spank_option({"srun", "-N", "2", "--eziotrace", "out", "./app"}),
            (Words{"srun", "-N", "2", "./app"}));
}

TEST(SpankCommand, GetoptsAbbreviationsAreTheOption) {
  EXPECT_EQ(srun_without_spank_option({"srun", "--ez=a", "--ezio", "b", "-n2", "./app"}),
            (Words{"srun", "-n2", "./app"}));
  EXPECT_FALSE(is_spank_option_word("--e=x"));  // ambiguous with srun's --error, --export...
  EXPECT_FALSE(is_spank_option_word("--eziotracer"));
  EXPECT_FALSE(is_spank_option_word("-eziotrace"));
  EXPECT_TRUE(is_spank_option_word("--eziotrace"));
}

TEST(SpankCommand, SrunsOtherOptionsAndTheProgramsArgumentsStay) {
  // -o's value looks like the option, the program's own --eziotrace is its argument: both stay.
  EXPECT_EQ(srun_without_spank_option({"/usr/bin/srun", "-o", "--eziotrace=x", "--mpi", "pmi2",
                                       "--eziotrace=d", "-lN", "2", "./app", "--eziotrace=y"}),
            (Words{"/usr/bin/srun", "-o", "--eziotrace=x", "--mpi", "pmi2", "-lN", "2", "./app",
                   "--eziotrace=y"}));
  EXPECT_EQ(srun_without_spank_option({"srun", "-N2", "--", "--eziotrace=z"}),
            (Words{"srun", "-N2", "--", "--eziotrace=z"}));
}

TEST(SpankCommand, EveryOccurrenceGoes) {
  // srun keeps the last one given; the inner srun must see none.
  EXPECT_EQ(srun_without_spank_option({"srun", "--eziotrace=a", "-N2", "--eziotrace=b", "./app"}),
            (Words{"srun", "-N2", "./app"}));
}

TEST(SpankCommand, RunAndToolsSelectEZTracesLayers) {
  EXPECT_EQ(command({"srun", "--eziotrace=o,run", "./app"}, "o,run"),
            (Words{"/usr/bin/eziotrace", "run", "-o", "o", "--", "srun", "./app"}));
  EXPECT_EQ(command({"srun", "./app"}, "tools=mpich+posixio,out=run"),
            (Words{"/usr/bin/eziotrace", "run", "-t", "mpich,posixio", "-o", "run", "--", "srun",
                   "./app"}));
  EXPECT_FALSE(parse_spank_value("d,record").run_mode);
}

TEST(SpankCommand, BadValuesAreRefusedWithTheSyntax) {
  for (std::string_view bad :
       {"", ",", "run", "out=", "a,b", "a,mode=run", "a,record,run", "a,record,tools=mpich",
        "a,tools=", "a,tools=mpich,posixio", "a,tools=mpich:posixio", "-N"}) {
    try {
      parse_spank_value(bad);
      ADD_FAILURE() << "accepted --eziotrace=" << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--eziotrace"), std::string::npos) << e.what();
    }
  }
}

TEST(SpankCommand, SlurmsVariablesOfTheOptionAreKnown) {
  EXPECT_TRUE(is_spank_option_variable("_SLURM_SPANK_OPTION_eziotrace_eziotrace"));
  EXPECT_TRUE(is_spank_option_variable("SLURM_SPANK__SLURM_SPANK_OPTION_eziotrace_eziotrace"));
  EXPECT_TRUE(is_spank_option_variable("SPANK__SLURM_SPANK_OPTION_eziotrace_eziotrace"));
  EXPECT_FALSE(is_spank_option_variable("_SLURM_SPANK_OPTION_other_eziotrace"));
  EXPECT_FALSE(is_spank_option_variable("EZIOTRACE_SESSION"));
}

TEST(SpankCommand, PlugstackArgumentsNameEziotrace) {
  EXPECT_EQ(spank_eziotrace_path({}, "/usr/bin/eziotrace"), "/usr/bin/eziotrace");
  EXPECT_EQ(spank_eziotrace_path({"eziotrace=/opt/e/bin/eziotrace"}, "/usr/bin/eziotrace"),
            "/opt/e/bin/eziotrace");
  EXPECT_THROW(spank_eziotrace_path({"eziotrace=bin/eziotrace"}, "/x"), Error);
  EXPECT_THROW(spank_eziotrace_path({"path=/x"}, "/x"), Error);
}

}  // namespace
}  // namespace ezio::converters
