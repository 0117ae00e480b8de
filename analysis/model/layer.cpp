// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/layer.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "common/schema/layers.h"

namespace ezio::analysis {

namespace {
static_assert(schema::kUserLayers.size() == static_cast<size_t>(Layer::kUser) + 1,
              "Layer's user-level layers are schema::kUserLayers, in order");
static_assert(schema::kUserLayers.back().key == schema::kUserLayer);
constexpr size_t kFirstKernel = schema::kUserLayers.size();
}  // namespace

std::string_view layer_title(Layer l) {
  static constexpr std::array<std::string_view, schema::kKernelIoLayers.size()> kernel = {
      "Syscall", "VFS", "FS", "Page cache", "Block"};
  size_t i = static_cast<size_t>(l);
  return i < kFirstKernel ? schema::kUserLayers[i].title : kernel[i - kFirstKernel];
}

std::string_view layer_key(Layer l) {
  size_t i = static_cast<size_t>(l);
  return i < kFirstKernel ? schema::kUserLayers[i].key : schema::kKernelIoLayers[i - kFirstKernel];
}

std::optional<Layer> layer_of_paradigm(std::string_view name) {
  for (size_t i = 0; i < kFirstKernel; ++i) {
    if (!schema::kUserLayers[i].paradigm.empty() && schema::kUserLayers[i].paradigm == name) {
      return static_cast<Layer>(i);
    }
  }
  return std::nullopt;
}

std::optional<Layer> parse_layer(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "page cache" || lower == "page-cache") lower = "pagecache";
  if (lower == "mpi-io") lower = "mpiio";
  if (lower == "posix") lower = "user";
  for (Layer l : kAllLayers) {
    if (layer_key(l) == lower) return l;
  }
  return std::nullopt;
}

std::string_view op_name(Op o) {
  static constexpr std::array<std::string_view, kOpCount> names = {"read", "write", "other"};
  return names[static_cast<size_t>(o)];
}

Layer layer_of(std::string_view canonical_name) {
  auto colon = canonical_name.find(':');
  if (colon != std::string_view::npos) {
    std::string_view prefix = canonical_name.substr(0, colon);
    for (Layer l : kAllLayers) {
      if (!is_user_level(l) && layer_key(l) == prefix) return l;
    }
  }
  return static_cast<Layer>(schema::user_layer_of_region(canonical_name));
}

std::string_view short_name(std::string_view canonical_name) {
  if (is_user_level(layer_of(canonical_name))) return canonical_name;
  return canonical_name.substr(canonical_name.find(':') + 1);
}

Op op_from_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  // readlink/readdir read metadata, not file data.
  if (lower.find("readlink") != std::string::npos || lower.find("readdir") != std::string::npos) {
    return Op::kOther;
  }
  if (lower.find("write") != std::string::npos) return Op::kWrite;
  if (lower.find("read") != std::string::npos) return Op::kRead;
  return Op::kOther;
}

}  // namespace ezio::analysis
