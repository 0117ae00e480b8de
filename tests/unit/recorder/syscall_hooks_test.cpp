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

// The syscalls' fentry and fexit programs tail-call shared bodies loaded against
// EZIO_SC_BODY_FUNCTION (bpf/syscall_functions.bpf.h); newer kernels take a tail call between
// tracing programs only when their functions have one prototype, one BTF type (kernel/bpf/core.c,
// __bpf_prog_map_compatible), and the planner gives a function of another prototype the whole
// bodies (recorder/probe/probe.cpp). On this kernel's BTF most functions must share the bodies':
// else the shared bodies would verify once for nothing.
TEST(SyscallHooks, MostFunctionsShareTheBodysPrototype) {
  std::unique_ptr<btf, void (*)(btf*)> vmlinux(btf__load_vmlinux_btf(), btf__free);
  ASSERT_TRUE(vmlinux) << "no kernel BTF (/sys/kernel/btf/vmlinux)";
  auto proto_of = [&vmlinux](const char* fn) -> __u32 {
    __s32 id = btf__find_by_name_kind(vmlinux.get(), fn, BTF_KIND_FUNC);
    return id > 0 ? btf__type_by_id(vmlinux.get(), id)->type : 0;
  };
  __u32 body = proto_of(EZIO_HOOK_STR(EZIO_SC_BODY_FUNCTION));
  ASSERT_GT(body, 0u);
  size_t shared = 0, all = 0;
#define EZIO_PROTO_ROW_(name, fn) \
  ++all;                          \
  shared += proto_of("__x64_sys_" #fn) == body;
  EZIO_SYSCALL_FUNCTIONS(EZIO_PROTO_ROW_)
#undef EZIO_PROTO_ROW_
  EXPECT_GT(shared * 4, all * 3) << shared << " of " << all << " share the body's prototype";
}

}  // namespace
