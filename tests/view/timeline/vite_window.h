// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// ViTE as a person runs it: its parser's verdict and SVG export, and its window under a private
// Xvfb as a screenshot.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ezio::test {

// ViTE's own parser: it always exits 0, its verdict is on stderr (expected: no error, no
// warning). Returns the SVG export.
std::string vite_svg(const std::filesystem::path& trace, const std::filesystem::path& svg);

// ViTE's window under a private Xvfb, as a PNG, and its colour histogram.
std::map<std::vector<int>, long> screenshot(const std::filesystem::path& trace,
                                            const std::filesystem::path& png);

// Pixels within a few levels of a colour: ViTE shades each state from its colour downwards.
long pixels_near(const std::map<std::vector<int>, long>& h, const std::vector<uint8_t>& c);

}  // namespace ezio::test
