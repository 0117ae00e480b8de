#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# install_test.sh files|man|completion BUILD_DIR: installs BUILD_DIR into a temporary prefix and
# checks one part of what a user gets. Exit 0 when every check passed; each failure says what.
set -uo pipefail
part=$1
build=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
need() { command -v "$1" >/dev/null || { echo "FAIL: $1 is not installed (scripts/setup.sh test)" >&2; exit 1; }; }

cmake --install "$build" --prefix "$prefix" >/dev/null || { echo "FAIL: cmake --install" >&2; exit 1; }
ezt=$prefix/bin/eziotrace

# Every subcommand eziotrace lists, and every long option of each (and of eziotraced).
subcommands() { "$@" --help | sed -n '/^Subcommands:/,/^$/{/^ \{1,\}[a-z]/{s/^ *\([a-z][a-z-]*\).*/\1/p}}'; }
long_options() { "$@" --help | sed -n 's/^ \{1,\}\(-[^ ]*\).*/\1/p' | tr ',' '\n' | sed -n 's/^\(--[a-z][a-z-]*\).*/\1/p' | grep -v -- '^--help$'; }

check_files() {
  for f in bin/eziotrace bin/eziotraced lib/eziotrace/libeziotrace-preload.so \
    share/man/man1/eziotrace.1 share/man/man8/eziotraced.8 \
    share/bash-completion/completions/eziotrace share/bash-completion/completions/eziotraced; do
    [ -e "$prefix/$f" ] || fail "cmake --install did not install $f"
  done
  # The SPANK plugin of srun --eziotrace, when the build has it (Slurm's spank.h found).
  if [ -e "$build/bin/spank_eziotrace.so" ]; then
    [ -e "$prefix/lib/eziotrace/spank_eziotrace.so" ] ||
      fail "cmake --install did not install lib/eziotrace/spank_eziotrace.so"
  fi
  # The installed eziotrace finds its preload helper in lib/eziotrace/ and says its version.
  "$ezt" --version | grep -q '^eziotrace [0-9]' || fail "installed eziotrace --version: $("$ezt" --version 2>&1)"
  "$prefix/bin/eziotraced" --version | grep -q '^eziotraced [0-9]' || fail "installed eziotraced --version"
}

check_man() {
  need man
  local page1 page8 rendered1 rendered8
  page1=$prefix/share/man/man1/eziotrace.1
  page8=$prefix/share/man/man8/eziotraced.8
  for page in "$page1" "$page8"; do
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || fail "groff failed on $page"
    [ -z "$warnings" ] || fail "groff warns on $(basename "$page"): $warnings"
    grep -q '@EZIO_VERSION@' "$page" && fail "$(basename "$page") still holds @EZIO_VERSION@"
  done
  # As a person reads it: man -l, no pager, plain text (hyphens as typed).
  rendered1=$(MANWIDTH=100 MAN_KEEP_FORMATTING= man -l "$page1" 2>&1 | col -b | sed 's/‐/-/g')
  rendered8=$(MANWIDTH=100 man -l "$page8" 2>&1 | col -b | sed 's/‐/-/g')
  grep -q "^NAME" <<<"$rendered1" || fail "man -l eziotrace.1 shows no NAME section"
  grep -q "eziotrace - where an application's I/O time goes" <<<"$rendered1" || fail "eziotrace.1: NAME line"
  grep -q "eziotraced - the eziotrace recording service" <<<"$rendered8" || fail "eziotraced.8: NAME line"
  local sub opt
  for sub in $(subcommands "$ezt"); do
    grep -qw -- "$sub" <<<"$rendered1" || fail "eziotrace.1 does not mention the subcommand $sub"
    for opt in $(long_options "$ezt" $sub); do
      grep -q -- "$opt\b" <<<"$rendered1" || fail "eziotrace.1 does not document $sub $opt"
    done
  done
  for opt in $(long_options "$ezt" service install) $(long_options "$ezt" service status) \
    $(long_options "$ezt" service flight add) $(long_options "$ezt" service flight remove); do
    grep -q -- "$opt\b" <<<"$rendered1" || fail "eziotrace.1 does not document service's $opt"
  done
  for opt in $(long_options "$prefix/bin/eziotraced"); do
    grep -q -- "$opt\b" <<<"$rendered8" || fail "eziotraced.8 does not document $opt"
  done
}

# complete_words WORD...: what the installed completion offers for the last word, one per line.
complete_words() {
  PATH=$prefix/bin:$PATH bash -c '
    source /usr/share/bash-completion/bash_completion
    source "$1"/share/bash-completion/completions/eziotrace
    shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    func=$(complete -p "$1" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
    "$func" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$prefix" "$@"
}

check_completion() {
  [ -f /usr/share/bash-completion/bash_completion ] ||
    { echo "FAIL: bash-completion is not installed (scripts/setup.sh test)" >&2; exit 1; }
  local registered
  registered=$(bash -c 'source /usr/share/bash-completion/bash_completion
    source "$1"/share/bash-completion/completions/eziotrace; complete -p eziotrace eziotraced' _ "$prefix")
  grep -q 'complete -F _eziotrace eziotrace$' <<<"$registered" || fail "complete -p eziotrace: $registered"
  grep -q 'complete -F _eziotraced eziotraced$' <<<"$registered" || fail "complete -p eziotraced: $registered"
  # The completions are read whole before grep: under pipefail, grep -q leaving at its first
  # match could fail the pipeline with the writer's SIGPIPE.
  expect() { # expect "WANTED" words...: WANTED is among the completions of the words
    local wanted=$1 got; shift
    got=$(complete_words "$@")
    grep -qx -- "$wanted" <<<"$got" || fail "completing '$*' does not offer $wanted (got: $(tr '\n' ' ' <<<"$got"))"
  }
  refuse() { # refuse "UNWANTED" words...
    local unwanted=$1 got; shift
    got=$(complete_words "$@")
    grep -qx -- "$unwanted" <<<"$got" && fail "completing '$*' offers $unwanted"
    return 0
  }
  expect record eziotrace re
  expect report eziotrace re
  expect --version eziotrace --v
  expect --layers eziotrace record --la
  expect --keep-parts eziotrace run --ke
  expect --by-file eziotrace layers --by
  expect device eziotrace top --by d
  expect --svg eziotrace latency --s
  expect perfetto eziotrace export --format p
  expect pagecache eziotrace record --layers pa
  expect install eziotrace service i
  expect --no-start eziotrace service install --no
  expect remove eziotrace service flight r
  expect --mib eziotrace service flight add /job42 --seconds 10 --m
  expect --max-sessions-per-user eziotraced --max-s
  # The recorded command's own options are not eziotrace's.
  refuse --layers eziotrace record -o out ls --la
  refuse --layers eziotrace ./app --la
  refuse --layers eziotrace record -- ls --la
}

case $part in
  files) check_files ;;
  man) check_man ;;
  completion) check_completion ;;
  *) echo "usage: install_test.sh files|man|completion BUILD_DIR" >&2; exit 2 ;;
esac
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }
echo "install.$part: all checks passed"
