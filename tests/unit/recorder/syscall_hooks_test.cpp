// SPDX-License-Identifier: GPL-2.0-only
// The syscall layer's two ways in record the same syscalls: the list of functions its fentry
// programs are made from (bpf/hooks.h) names exactly the table the tracepoint path filters by
// (recorder/core/syscall_table.cpp). A syscall in one list only would be recorded in one hook mode
// and silently missing in the other.
#include <bpf/btf.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "hooks.h"
#include "recorder/core/syscall_table.h"

namespace {

TEST(SyscallHooks, FentryListIsTheTable) {
  std::set<std::string> table;
  for (const auto& s : ezio::recorder::syscall_table()) table.emplace(s.name);
  std::set<std::string> hooked;
#define EZIO_NAME_ROW_(name, fn) hooked.insert(#name);
  EZIO_SYSCALL_FUNCTIONS(EZIO_NAME_ROW_)
#undef EZIO_NAME_ROW_
  EXPECT_EQ(hooked, table);
}

// Each function is one the kernel has (sendfile's number is the kernel's sendfile64, say): a name
// it lacks would refuse fentry to the whole list on every kernel. Read from this kernel's BTF,
// which names the functions even where fentry does not attach (this host).
TEST(SyscallHooks, FunctionsAreInTheKernelsBtf) {
  std::unique_ptr<btf, void (*)(btf*)> vmlinux(btf__load_vmlinux_btf(), btf__free);
  ASSERT_TRUE(vmlinux) << "no kernel BTF (/sys/kernel/btf/vmlinux)";
#define EZIO_BTF_ROW_(name, fn)                                                        \
  EXPECT_GT(btf__find_by_name_kind(vmlinux.get(), "__x64_sys_" #fn, BTF_KIND_FUNC), 0) \
      << "__x64_sys_" #fn;
  EZIO_SYSCALL_FUNCTIONS(EZIO_BTF_ROW_)
#undef EZIO_BTF_ROW_
}

}  // namespace
