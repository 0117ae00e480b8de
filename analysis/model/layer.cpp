// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/layer.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "common/schema/layers.h"

namespace ezio::analysis {

std::string_view layer_title(Layer l) {
  static constexpr std::array<std::string_view, kLayerCount> titles = {
      "User", "Syscall", "VFS", "FS", "Page cache", "Block"};
  return titles[static_cast<size_t>(l)];
}

std::string_view layer_key(Layer l) {
  static constexpr std::array<std::string_view, kLayerCount> keys = {
      schema::kUserLayer,         schema::kKernelIoLayers[0], schema::kKernelIoLayers[1],
      schema::kKernelIoLayers[2], schema::kKernelIoLayers[3], schema::kKernelIoLayers[4]};
  return keys[static_cast<size_t>(l)];
}

std::optional<Layer> parse_layer(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "page cache" || lower == "page-cache") lower = "pagecache";
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
  if (colon == std::string_view::npos) return Layer::kUser;
  std::string_view prefix = canonical_name.substr(0, colon);
  for (Layer l : kAllLayers) {
    if (l != Layer::kUser && layer_key(l) == prefix) return l;
  }
  return Layer::kUser;
}

std::string_view short_name(std::string_view canonical_name) {
  if (layer_of(canonical_name) == Layer::kUser) return canonical_name;
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
