// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/probe/core_btf.h"

#include <bpf/btf.h>
#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "common/unique_fd.h"
#include "recorder/core/bpf_object.h"
#include "recorder/probe/probe_kernel.h"

extern char** environ;

namespace fs = std::filesystem;

namespace ezio::recorder {
namespace {

constexpr const char* kVmlinux = "/sys/kernel/btf/vmlinux";

using BtfPtr = std::unique_ptr<btf, BtfDeleter>;

// A section of the (trusted, embedded) object, bounds-checked all the same; empty when absent.
std::string_view elf_section(std::string_view elf, std::string_view name) {
  Elf64_Ehdr eh{};
  if (elf.size() < sizeof(eh)) return {};
  std::memcpy(&eh, elf.data(), sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return {};
  auto header = [&](size_t i) {
    Elf64_Shdr s{};
    size_t off = eh.e_shoff + i * eh.e_shentsize;
    if (off + sizeof(s) <= elf.size()) std::memcpy(&s, elf.data() + off, sizeof(s));
    return s;
  };
  auto bytes = [&](const Elf64_Shdr& s) {
    return s.sh_offset + s.sh_size <= elf.size() ? elf.substr(s.sh_offset, s.sh_size)
                                                 : std::string_view();
  };
  std::string_view names = bytes(header(eh.e_shstrndx));
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr s = header(i);
    if (s.sh_name < names.size() && names.substr(s.sh_name).starts_with(name) &&
        (s.sh_name + name.size() == names.size() || names[s.sh_name + name.size()] == '\0')) {
      return bytes(s);
    }
  }
  return {};
}

uint32_t u32_at(std::string_view b, size_t off) {
  uint32_t v = 0;
  if (off + sizeof(v) <= b.size()) std::memcpy(&v, b.data() + off, sizeof(v));
  return v;
}

// The names (without ___flavour) of the types the object's CO-RE relocations start from, read
// from .BTF.ext (struct btf_ext_header, then per section: sec_name_off, num_info, and num_info
// struct bpf_core_relo {insn_off, type_id, access_str_off, kind} of rec_size bytes).
std::set<std::string> relocated_type_names(std::string_view elf) {
  std::string_view types = elf_section(elf, ".BTF"), ext = elf_section(elf, ".BTF.ext");
  BtfPtr local(btf__new(types.data(), types.size()));
  if (!local || ext.size() < 32) fail("the BPF object has no BTF or no .BTF.ext");
  uint32_t hdr_len = u32_at(ext, 4);
  if (hdr_len < 32) return {};  // no CO-RE relocation part
  std::string_view relos = ext.substr(std::min<size_t>(ext.size(), hdr_len + u32_at(ext, 24)));
  relos = relos.substr(0, std::min<size_t>(relos.size(), u32_at(ext, 28)));
  uint32_t rec_size = u32_at(relos, 0);
  if (rec_size < 8) return {};
  std::set<std::string> names;
  for (size_t off = 4; off + 8 <= relos.size();) {
    uint32_t n = u32_at(relos, off + 4);
    off += 8;
    for (uint32_t i = 0; i < n && off + rec_size <= relos.size(); ++i, off += rec_size) {
      const btf_type* t = btf__type_by_id(local.get(), u32_at(relos, off + 4));
      std::string name = t ? btf__name_by_offset(local.get(), t->name_off) : "";
      if (size_t cut = name.find("___"); cut != std::string::npos) name.resize(cut);
      if (!name.empty()) names.insert(name);
    }
  }
  return names;
}

void add_names(const btf* b, uint32_t first, std::unordered_set<std::string_view>& into) {
  for (uint32_t id = first; id < btf__type_cnt(b); ++id) {
    const char* n = btf__name_by_offset(b, btf__type_by_id(b, id)->name_off);
    if (n && *n) into.insert(n);
  }
}

// With a custom BTF libbpf does not look into the modules' BTF: the cut-down file is equivalent
// only when no relocated type lives in a module alone. The name of the first one that does.
std::string type_only_in_module(std::string_view elf) {
  std::vector<fs::path> modules;
  for (const auto& entry : fs::directory_iterator("/sys/kernel/btf")) {
    if (entry.path() != kVmlinux) modules.push_back(entry.path());
  }
  if (modules.empty()) return {};  // nothing libbpf could have found elsewhere
  std::set<std::string> wanted = relocated_type_names(elf);
  BtfPtr vmlinux(btf__parse(kVmlinux, nullptr));
  if (!vmlinux) fail("cannot read {}: {}", kVmlinux, errno_text(errno));
  std::unordered_set<std::string_view> known;
  add_names(vmlinux.get(), 1, known);
  std::erase_if(wanted, [&](const std::string& n) { return known.count(n) > 0; });
  if (wanted.empty()) return {};
  for (const auto& path : modules) {
    BtfPtr module(btf__parse_split(path.c_str(), vmlinux.get()));
    if (!module) continue;
    std::unordered_set<std::string_view> in_module;
    add_names(module.get(), btf__type_cnt(vmlinux.get()), in_module);
    for (const auto& n : wanted) {
      if (in_module.count(n)) return fmt::format("{} (module {})", n, path.filename().string());
    }
  }
  return {};
}

// A file removed when it goes out of scope.
struct TempFile {
  explicit TempFile(const fs::path& like) : path(like.string() + ".XXXXXX") {
    fd = UniqueFd(mkstemp(path.data()));
    if (!fd) fail("cannot create {}: {}", path, errno_text(errno));
  }
  ~TempFile() { unlink(path.c_str()); }
  std::string path;
  UniqueFd fd;
};

// Runs bpftool with its messages going to `log`; "" when it succeeded, else what went wrong.
std::string run_bpftool(const std::vector<std::string>& args, const TempFile& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t io;
  posix_spawn_file_actions_init(&io);
  posix_spawn_file_actions_addopen(&io, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&io, log.fd.get(), 2);
  pid_t pid = 0;
  int err = posix_spawn(&pid, argv[0], &io, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&io);
  if (err != 0) return fmt::format("cannot run {}: {}", argv[0], errno_text(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  std::ifstream in(log.path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return fmt::format("{} gen min_core_btf failed: {}", argv[0], last);
}

}  // namespace

bool make_core_btf(const fs::path& out) {
  try {
    std::string_view elf = bpf_object_elf();
    if (std::string m = type_only_in_module(elf); !m.empty()) {
      spdlog::debug("no cut-down kernel types: the programs read {}, which libbpf would miss", m);
      return false;
    }
    TempFile object(out.string() + ".object");
    if (write(object.fd.get(), elf.data(), elf.size()) != static_cast<ssize_t>(elf.size())) {
      fail("cannot write {}: {}", object.path, errno_text(errno));
    }
    TempFile made(out), log(out.string() + ".log");
    std::string failed =
        run_bpftool({EZIO_BPFTOOL, "gen", "min_core_btf", kVmlinux, made.path, object.path}, log);
    if (!failed.empty()) {
      spdlog::debug("no cut-down kernel types: {}", failed);
      return false;
    }
    if (rename(made.path.c_str(), out.c_str()) != 0) fail("cannot rename to {}", out.string());
    return true;
  } catch (const std::exception& e) {
    spdlog::debug("no cut-down kernel types: {}", e.what());
    return false;
  }
}

}  // namespace ezio::recorder
