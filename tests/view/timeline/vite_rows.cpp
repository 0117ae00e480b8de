// SPDX-License-Identifier: GPL-2.0-only
#include "vite_rows.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>
#include <regex>
#include <stdexcept>

#include "run.h"

namespace ezio::test {
namespace {

struct Rect {
  double x, y, w, h;
};

// The screenshot as rows of RGB pixels (ImageMagick's binary PPM).
struct Image {
  int width = 0, height = 0;
  std::string rgb;
  const uint8_t* at(int x, int y) const {
    return reinterpret_cast<const uint8_t*>(rgb.data()) + 3 * (static_cast<size_t>(y) * width + x);
  }
  // A container box: ViTE shades them from rgb(0,0,153) to dark blue, nothing red or green.
  bool box(int x, int y) const {
    const uint8_t* p = at(x, y);
    return p[0] <= 10 && p[1] <= 10 && p[2] >= 80 && p[2] <= 170;
  }
  // ViTE's grey between containers, rgb(128,128,140).
  bool grey(int x, int y) const {
    const uint8_t* p = at(x, y);
    return std::abs(p[0] - 128) <= 6 && std::abs(p[1] - 128) <= 6 && std::abs(p[2] - 140) <= 6;
  }
};

Image read_ppm(const std::filesystem::path& png) {
  auto r = run({"/usr/bin/convert", png.string(), "ppm:-"});
  if (r.status != 0) throw std::runtime_error("convert " + png.string() + ": " + r.err);
  // "P6 <width> <height> <maxval>" and one whitespace, with `#` comments (xwd leaves one).
  const std::string& d = r.out;
  size_t at = 0;
  auto token = [&] {
    while (at < d.size() && (isspace(static_cast<unsigned char>(d[at])) || d[at] == '#')) {
      if (d[at] == '#') at = d.find('\n', at);
      if (at == std::string::npos) throw std::runtime_error("truncated PPM from convert");
      ++at;
    }
    size_t start = at;
    while (at < d.size() && !isspace(static_cast<unsigned char>(d[at]))) ++at;
    return d.substr(start, at - start);
  };
  Image img;
  if (token() != "P6") throw std::runtime_error("not a PPM from convert");
  img.width = std::stoi(token());
  img.height = std::stoi(token());
  if (token() != "255") throw std::runtime_error("not an 8-bit PPM from convert");
  img.rgb = d.substr(at + 1);
  if (img.rgb.size() < static_cast<size_t>(img.width) * img.height * 3) {
    throw std::runtime_error("short PPM from convert");
  }
  return img;
}

}  // namespace

std::vector<LeafBox> leaf_boxes(const std::string& svg) {
  static const std::regex rect(
      R"re(<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="rgb\(0,0,153\)")re");
  static const std::regex text(R"re(<text x="([0-9.]+)" y="([0-9.]+)" [^>]*>([^<]*)</text>)re");
  std::vector<Rect> boxes;
  for (std::sregex_iterator i(svg.begin(), svg.end(), rect), e; i != e; ++i) {
    boxes.push_back(
        {std::stod((*i)[1]), std::stod((*i)[2]), std::stod((*i)[3]), std::stod((*i)[4])});
  }
  if (boxes.empty()) return {};
  double leaf_x = 0;
  for (const Rect& b : boxes) leaf_x = std::max(leaf_x, b.x);
  std::vector<Rect> leaves;
  for (const Rect& b : boxes) {
    if (b.x == leaf_x) leaves.push_back(b);
  }
  std::sort(leaves.begin(), leaves.end(), [](auto& a, auto& b) { return a.y < b.y; });
  std::vector<LeafBox> out;
  for (const Rect& b : leaves) {
    LeafBox box{"", b.h};
    for (std::sregex_iterator i(svg.begin(), svg.end(), text), e; i != e; ++i) {
      double x = std::stod((*i)[1]), y = std::stod((*i)[2]);
      if (x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h) box.label = (*i)[3];
    }
    out.push_back(box);
  }
  return out;
}

std::vector<int> leaf_box_heights(const std::filesystem::path& png) {
  Image img = read_ppm(png);
  // The leaf column starts at the rightmost box edge that follows grey, on any line of the
  // middle half of the screen (the time ruler above is blue too, but not container blue).
  int left = -1;
  for (int y = img.height / 4; y < 3 * img.height / 4; y += 4) {
    for (int x = 1; x < img.width / 2; ++x) {
      if (img.grey(x - 1, y) && img.box(x, y)) left = std::max(left, x);
    }
  }
  if (left < 0) return {};
  // Its first pixel column. A label (a parent's too) may run over it for a few pixels: a box
  // ends where ViTE's grey shows, not at a letter.
  int x = left;
  auto resumes = [&](int y) {
    for (int k = y; k < std::min(img.height, y + 6); ++k) {
      if (img.grey(x, k)) return false;
      if (img.box(x, k)) return true;
    }
    return false;
  };
  std::vector<int> heights;
  int run = 0;
  for (int y = 0; y < img.height; ++y) {
    if (img.box(x, y) || (run > 0 && resumes(y))) {
      ++run;
      continue;
    }
    if (run >= 3) heights.push_back(run);
    run = 0;
  }
  if (run >= 3) heights.push_back(run);
  return heights;
}

}  // namespace ezio::test
