// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/elf_needed.h"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "common/unique_fd.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

// No closure of a real program is this large: a bound against a loop of odd files.
constexpr size_t kMaxObjects = 2000;

template <typename T>
bool read_at(int fd, off_t offset, T* to, size_t count = 1) {
  size_t bytes = sizeof(T) * count;
  return pread(fd, to, bytes, offset) == static_cast<ssize_t>(bytes);
}

std::optional<off_t> file_offset(const std::vector<Elf64_Phdr>& phdrs, uint64_t addr) {
  for (const auto& p : phdrs) {
    if (p.p_type == PT_LOAD && addr >= p.p_vaddr && addr < p.p_vaddr + p.p_filesz) {
      return static_cast<off_t>(addr - p.p_vaddr + p.p_offset);
    }
  }
  return std::nullopt;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

// The directories of an ld.so.conf file, its `include` globs followed.
void conf_dirs(const std::string& file, int depth, std::vector<std::string>& out) {
  std::ifstream in(file);
  std::string line;
  while (depth < 8 && std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::stringstream ss(line);
    std::string word;
    if (!(ss >> word)) continue;
    if (word != "include") {
      out.push_back(word);
      continue;
    }
    std::string pattern;
    ss >> pattern;
    if (!pattern.starts_with("/")) pattern = fs::path(file).parent_path() / pattern;
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) conf_dirs(g.gl_pathv[i], depth + 1, out);
    }
    globfree(&g);
  }
}

const std::vector<std::string>& system_dirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<std::string> d;
    conf_dirs("/etc/ld.so.conf", 0, d);
    for (const char* x : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                          "/usr/lib64", "/lib", "/usr/lib"})
      d.emplace_back(x);
    return d;
  }();
  return dirs;
}

std::optional<fs::path> find_library(const std::string& name, const ElfDynamic& by,
                                     const std::vector<std::string>& ld_library_path) {
  if (name.find('/') != std::string::npos) return fs::path(name);
  for (const auto* dirs : {&ld_library_path, &by.runpath, &system_dirs()}) {
    for (const auto& d : *dirs) {
      std::error_code ec;
      fs::path p = fs::path(d) / name;
      if (fs::is_regular_file(p, ec) && read_elf_dynamic(p).elf) return p;
    }
  }
  return std::nullopt;
}

}  // namespace

ElfDynamic read_elf_dynamic(const fs::path& file) {
  ElfDynamic out;
  UniqueFd fd(open(file.c_str(), O_RDONLY | O_CLOEXEC));
  Elf64_Ehdr e{};
  if (!fd || !read_at(fd.get(), 0, &e) || memcmp(e.e_ident, ELFMAG, SELFMAG) != 0 ||
      e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_phentsize != sizeof(Elf64_Phdr)) {
    return out;
  }
  out.elf = true;
  std::vector<Elf64_Phdr> phdrs(e.e_phnum);
  if (!read_at(fd.get(), static_cast<off_t>(e.e_phoff), phdrs.data(), phdrs.size())) return out;
  const Elf64_Phdr* dyn = nullptr;
  for (const auto& p : phdrs) {
    if (p.p_type == PT_DYNAMIC) dyn = &p;
  }
  if (!dyn) return out;  // statically linked
  std::vector<Elf64_Dyn> entries(dyn->p_filesz / sizeof(Elf64_Dyn));
  if (!read_at(fd.get(), static_cast<off_t>(dyn->p_offset), entries.data(), entries.size()))
    return out;
  uint64_t strtab = 0, strsz = 0;
  for (const auto& d : entries) {
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
  }
  auto at = file_offset(phdrs, strtab);
  if (!at || strsz == 0 || strsz > (64u << 20)) return out;
  std::string names(strsz, '\0');
  if (!read_at(fd.get(), *at, names.data(), strsz)) return out;
  auto str = [&](uint64_t off) { return off < strsz ? std::string(names.c_str() + off) : ""; };
  std::string rpath, runpath;
  for (const auto& d : entries) {
    if (d.d_tag == DT_NEEDED) out.needed.push_back(str(d.d_un.d_val));
    if (d.d_tag == DT_RPATH) rpath = str(d.d_un.d_val);
    if (d.d_tag == DT_RUNPATH) runpath = str(d.d_un.d_val);
  }
  std::string origin = fs::absolute(file).parent_path().string();
  for (auto dir : split(runpath.empty() ? rpath : runpath, ':')) {
    for (const char* o : {"${ORIGIN}", "$ORIGIN"}) {
      if (size_t p = dir.find(o); p != std::string::npos) dir.replace(p, strlen(o), origin);
    }
    out.runpath.push_back(dir);
  }
  return out;
}

void visit_needed(const fs::path& file, const std::string& ld_library_path,
                  const std::function<bool(const std::string&, const fs::path&)>& visit) {
  std::vector<std::string> env_dirs = split(ld_library_path, ':');
  std::set<std::string> seen;
  std::deque<fs::path> queue = {file};
  std::set<fs::path> objects = {file};
  while (!queue.empty() && objects.size() < kMaxObjects) {
    fs::path object = queue.front();
    queue.pop_front();
    ElfDynamic dyn = read_elf_dynamic(object);
    for (const auto& name : dyn.needed) {
      if (!seen.insert(name).second) continue;
      if (visit(name, object)) return;
      auto lib = find_library(name, dyn, env_dirs);
      std::error_code ec;
      if (lib && objects.insert(fs::weakly_canonical(*lib, ec)).second) queue.push_back(*lib);
    }
  }
}

}  // namespace ezio::converters
