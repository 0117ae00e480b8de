// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The rows ViTE gives the locations of an OTF2 archive, as a person sees them: the leaf
// containers (one per location) of ViTE's SVG export, named and in its order, and their heights
// in pixels in a screenshot of ViTE's window.
#include <filesystem>
#include <string>
#include <vector>

namespace ezio::test {

struct LeafBox {
  std::string label;  // ViTE's "<location name>_<id>"
  double svg_height = 0;
  int screen_height = 0;  // 0 until matched with a screenshot
};

// The leaf containers of ViTE's SVG export (`vite TRACE -e out.svg`), top to bottom.
std::vector<LeafBox> leaf_boxes(const std::string& svg);

// The heights of the leaf containers in a screenshot of ViTE's window, top to bottom: the
// rightmost column of container boxes (ViTE paints them pure blue, shaded, on its grey background),
// cut where the grey shows between two boxes. Empty when no container column is found.
std::vector<int> leaf_box_heights(const std::filesystem::path& png);

}  // namespace ezio::test
