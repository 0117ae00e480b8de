// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/session/start_gate.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "common/unique_fd.h"

namespace ezio::recorder {
namespace {

// Script interpreters followed: the kernel itself follows a few levels only.
constexpr int kMaxInterpreterDepth = 4;

}  // namespace

// PATH is the recorder's: the launcher's child execs with it.
std::optional<std::string> resolve_command(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/bin:/usr/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return std::nullopt;
}

namespace {

template <typename T>
bool read_at(int fd, off_t offset, T* to, size_t count = 1) {
  size_t bytes = sizeof(T) * count;
  return pread(fd, to, bytes, offset) == static_cast<ssize_t>(bytes);
}

// This process's own ELF header: the architecture the helper was built for.
const Elf64_Ehdr* own_header() {
  static std::optional<Elf64_Ehdr> own = [] {
    std::optional<Elf64_Ehdr> h;
    UniqueFd fd(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    Elf64_Ehdr e{};
    if (fd && read_at(fd.get(), 0, &e)) h = e;
    return h;
  }();
  return own ? &*own : nullptr;
}

// The file offset of virtual address `addr`, from the loadable segments.
std::optional<off_t> file_offset(const std::vector<Elf64_Phdr>& phdrs, uint64_t addr) {
  for (const auto& p : phdrs) {
    if (p.p_type == PT_LOAD && addr >= p.p_vaddr && addr < p.p_vaddr + p.p_filesz) {
      return static_cast<off_t>(addr - p.p_vaddr + p.p_offset);
    }
  }
  return std::nullopt;
}

// Why a dynamic executable's dynamic section rules the gate out, "" if it does not.
std::string check_dynamic(int fd, const std::vector<Elf64_Phdr>& phdrs, const Elf64_Phdr& dyn) {
  std::vector<Elf64_Dyn> entries(dyn.p_filesz / sizeof(Elf64_Dyn));
  if (!read_at(fd, dyn.p_offset, entries.data(), entries.size())) return "unreadable ELF";
  uint64_t strtab = 0, strsz = 0;
  for (const auto& d : entries) {
    if (d.d_tag == DT_PREINIT_ARRAY) return "it has pre-initialisation functions";
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
  }
  auto at = file_offset(phdrs, strtab);
  if (!at || strsz == 0 || strsz > (64u << 20)) return "no dynamic string table";
  std::string names(strsz, '\0');
  if (!read_at(fd, *at, names.data(), strsz)) return "unreadable ELF";
  // Names are NUL-terminated: the whole name, not a longer one ending with it.
  static const std::string wanted = std::string("\0__libc_start_main\0", 19);
  if (names.find(wanted) == std::string::npos) return "it does not start through glibc";
  return "";
}

std::string check_elf(int fd) {
  Elf64_Ehdr e{};
  const Elf64_Ehdr* own = own_header();
  if (!read_at(fd, 0, &e) || !own || e.e_ident[EI_CLASS] != own->e_ident[EI_CLASS] ||
      e.e_machine != own->e_machine || e.e_phentsize != sizeof(Elf64_Phdr)) {
    return "not an ELF program of this machine";
  }
  std::vector<Elf64_Phdr> phdrs(e.e_phnum);
  if (!read_at(fd, e.e_phoff, phdrs.data(), phdrs.size())) return "unreadable ELF";
  const Elf64_Phdr* dynamic = nullptr;
  bool interp = false;
  for (const auto& p : phdrs) {
    if (p.p_type == PT_INTERP) interp = true;
    if (p.p_type == PT_DYNAMIC) dynamic = &p;
  }
  if (!interp || !dynamic) return "statically linked";
  return check_dynamic(fd, phdrs, *dynamic);
}

// The interpreter of a `#!` line, "" if none.
std::string interpreter(const char* head, size_t n) {
  std::string line(head + 2, n - 2);
  line = line.substr(0, line.find('\n'));
  size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos) return "";
  return line.substr(start, line.find_first_of(" \t", start) - start);
}

std::string check_file(const std::string& path, int depth) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0) return path + " cannot be read";
  if (st.st_mode & (S_ISUID | S_ISGID)) return path + " is setuid or setgid";
  if (fgetxattr(fd.get(), "security.capability", nullptr, 0) > 0) {
    return path + " has file capabilities";
  }
  char head[256];
  ssize_t n = pread(fd.get(), head, sizeof head, 0);
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    std::string interp = interpreter(head, static_cast<size_t>(n));
    if (interp.empty() || depth >= kMaxInterpreterDepth) return path + ": no interpreter";
    return check_file(interp, depth + 1);
  }
  std::string why = check_elf(fd.get());
  return why.empty() ? "" : path + ": " + why;
}

}  // namespace

std::string why_helper_not_loaded(const std::vector<std::string>& env, const std::string& helper) {
  if (helper.empty() || helper.find_first_of(": \t") != std::string::npos ||
      access(helper.c_str(), R_OK) != 0) {
    return "the preload helper cannot be loaded";
  }
  for (const auto& e : env) {
    if (!e.starts_with("LD_PRELOAD=")) continue;
    std::string list = e.substr(11);
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find_first_of(": \t", start);
      if (end == std::string::npos) end = list.size();
      if (list.compare(start, end - start, helper) == 0) return "";
      start = end + 1;
    }
  }
  return "its environment does not preload the helper";
}

std::string why_not_gated(const std::string& command) {
  auto path = resolve_command(command);
  if (!path) return command + " not found";
  return check_file(*path, 0);
}

}  // namespace ezio::recorder
