// SPDX-License-Identifier: GPL-2.0-only
#include "vite_window.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "run.h"

namespace fs = std::filesystem;

namespace ezio::test {

std::string vite_svg(const fs::path& trace, const fs::path& svg) {
  auto r =
      run({"vite", trace.string(), "-e", svg.string()}, {"HOME=" + svg.parent_path().string()});
  EXPECT_NE((r.out + r.err).find("0 errors and 0 warnings"), std::string::npos) << r.out << r.err;
  std::ifstream in(svg);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::vector<int>, long> screenshot(const fs::path& trace, const fs::path& png) {
  int display = 150 + getpid() % 100;
  std::string disp = ":" + std::to_string(display);
  // Their output goes to /dev/null: Background closes its end of their stdout pipe.
  ezio::test::Background xvfb(
      {"sh", "-c", "exec Xvfb " + disp + " -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1"});
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::map<std::vector<int>, long> histogram;
  {
    ezio::test::Background vite({"sh", "-c",
                                 "DISPLAY=" + disp + " HOME=" + png.parent_path().string() +
                                     " exec vite " + trace.string() + " >/dev/null 2>&1"});
    std::this_thread::sleep_for(std::chrono::seconds(6));
    auto r = run({"sh", "-c", "xwd -root -silent | /usr/bin/convert xwd:- " + png.string()},
                 {"DISPLAY=" + disp});
    EXPECT_EQ(r.status, 0) << "screenshot failed (x11-apps, imagemagick): " << r.err;
  }
  auto h = run({"/usr/bin/convert", png.string(), "-format", "%c", "histogram:info:-"});
  std::istringstream in(h.out);
  std::string line;
  while (std::getline(in, line)) {
    long n;
    int r, g, b;
    if (sscanf(line.c_str(), " %ld: (%d,%d,%d", &n, &r, &g, &b) == 4) histogram[{r, g, b}] += n;
  }
  return histogram;
}

long pixels_near(const std::map<std::vector<int>, long>& h, const std::vector<uint8_t>& c) {
  long n = 0;
  for (auto& [rgb, count] : h) {
    if (std::abs(rgb[0] - c[0]) <= 6 && std::abs(rgb[1] - c[1]) <= 6 &&
        std::abs(rgb[2] - c[2]) <= 6)
      n += count;
  }
  return n;
}

}  // namespace ezio::test
