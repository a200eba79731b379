// How much of a long sectioned document a parent can navigate from its projection, with the
// outline of the omitted middle (engine/text/outline.hpp) and without it, at subagent/wait's caps
// (16 KiB, 600 lines), on documents written by others (scripts/bench.sh outline passes the
// markdown files of the npm packages client/pi's lock file pins).
//
// A heading (markdown_headings.hpp) is reachable when the parent can go to it without paging
// through the middle: its line is shown whole in the head or the tail, or the outline lists it
// with the line it starts on. Also measured: what the outline costs the head and the tail in
// bytes, and the projection's time with and without it (medians of alternated rounds).
//
//   handoff_bench_outline [--rounds N] [--min-headings N] FILE...
//
// Files under 16 KiB or with fewer than --min-headings headings (default 10) are skipped; a file
// whose bytes another file already had, or whose path after its last node_modules/ another file
// had (the same package document in two versions), is counted once. Change logs (a name holding
// CHANGELOG, CHANGES, HISTORY, NEWS or release-notes) are summed apart from the other documents:
// they are hundreds of version headings, more than an eighth of 16 KiB can list.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/markdown_headings.hpp"
#include "engine/text/projection.hpp"
#include "engine/fs/sha256.hpp"

namespace {

using handoff::heading;
using handoff::projection;
using handoff::projection_limits;

struct counts {
  std::size_t all = 0;
  std::size_t major = 0;  // levels 1 and 2
  void add(unsigned level) {
    ++all;
    if (level <= 2) ++major;
  }
};

struct document {
  std::string name;
  std::size_t bytes = 0;
  counts headings;
  counts before;  // reachable without the outline
  counts after;   // reachable with it
  std::size_t shown_before = 0;  // head + tail bytes of the text
  std::size_t shown_after = 0;
  double us_before = 0;
  double us_after = 0;
};

// The line numbers the outline of `p` lists (entries "  LINE #... TITLE" after the marker).
std::set<std::size_t> listed_lines(const std::string& out) {
  std::set<std::size_t> lines;
  const std::size_t start = out.find("\n[Omitted sections, at their lines of the full text (");
  if (start == std::string::npos) return lines;
  std::istringstream in(out.substr(out.find('\n', start + 1) + 1));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  +", 0) == 0) break;
    std::size_t number = 0;
    char hash = 0;
    if (std::sscanf(line.c_str(), "  %zu %c", &number, &hash) != 2 || hash != '#') break;
    lines.insert(number);
    if (!line.empty() && line.back() == ']') break;
  }
  return lines;
}

bool shown(const projection& p, std::size_t line) {
  return !p.truncated || line <= p.head_lines || line > p.total.lines - p.tail_lines;
}

double median_us(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::string percent(std::size_t part, std::size_t whole) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buffer;
}

// The totals of the documents `pick` chooses, as a markdown table.
template <typename Pick>
void summarise(const std::vector<document>& docs, const char* what, Pick pick) {
  document total;
  std::vector<double> cost_share;
  std::vector<double> time_ratio;
  std::size_t all_major_after = 0;
  for (const document& d : docs) {
    if (!pick(d)) continue;
    total.bytes += d.bytes;
    total.headings.all += d.headings.all;
    total.headings.major += d.headings.major;
    total.before.all += d.before.all;
    total.before.major += d.before.major;
    total.after.all += d.after.all;
    total.after.major += d.after.major;
    total.shown_before += d.shown_before;
    total.shown_after += d.shown_after;
    if (d.after.major == d.headings.major) ++all_major_after;
    cost_share.push_back(1.0 - static_cast<double>(d.shown_after) / static_cast<double>(d.shown_before));
    time_ratio.push_back(d.us_after / d.us_before);
  }
  std::sort(cost_share.begin(), cost_share.end());
  std::sort(time_ratio.begin(), time_ratio.end());
  if (cost_share.empty()) return;
  std::cout << "\n" << what << ": " << cost_share.size() << ", " << total.bytes / 1024 << " KB, " << total.headings.all
            << " headings (" << total.headings.major << " of levels 1-2), projected at 16 KiB / 600 lines:\n\n";
  std::cout << "| | without the outline | with it |\n|---|--:|--:|\n";
  std::cout << "| headings reachable | " << total.before.all << " (" << percent(total.before.all, total.headings.all)
            << ") | " << total.after.all << " (" << percent(total.after.all, total.headings.all) << ") |\n";
  std::cout << "| level 1-2 headings reachable | " << total.before.major << " ("
            << percent(total.before.major, total.headings.major) << ") | " << total.after.major << " ("
            << percent(total.after.major, total.headings.major) << ") |\n";
  std::cout << "| documents with every level 1-2 heading reachable | | " << all_major_after << " of " << cost_share.size() << " |\n";
  std::cout << "| head + tail bytes shown, all documents | " << total.shown_before << " | " << total.shown_after << " ("
            << percent(total.shown_before - total.shown_after, total.shown_before) << " less) |\n";
  std::cout << "| head + tail given up per document, median (max) | | " << percent(static_cast<std::size_t>(cost_share[cost_share.size() / 2] * 1e6), 1000000)
            << " (" << percent(static_cast<std::size_t>(cost_share.back() * 1e6), 1000000) << ") |\n";
  char ratio[64];
  std::snprintf(ratio, sizeof ratio, "%.2fx (%.2fx-%.2fx)", time_ratio[time_ratio.size() / 2], time_ratio.front(), time_ratio.back());
  std::cout << "| projection time with / without, median per document (range) | | " << ratio << " |\n";
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 21;
  std::size_t min_headings = 10;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--min-headings" && i + 1 < argc) {
      min_headings = std::stoul(argv[++i]);
    } else if (arg.substr(0, 2) == "--") {
      std::cerr << "usage: " << argv[0] << " [--rounds N] [--min-headings N] FILE...\n";
      return 2;
    } else {
      files.emplace_back(arg);
    }
  }
  const std::string sha(64, '0');
  const handoff::artifact_ref artifact{true, "/home/user/.pi/agent/cache/openpi/subagent-results/" + sha + ".txt", sha, ""};
  const projection_limits with{16384, 600, 0.75};
  projection_limits without = with;
  without.outline = false;

  std::set<std::string> seen;
  std::vector<document> docs;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    const std::size_t package = file.rfind("node_modules/");
    const std::string key = package == std::string::npos ? file : file.substr(package + 13);
    if (!in || handoff::fits(text, with) || !seen.insert(handoff::sha256_hex(text)).second ||
        !seen.insert(key).second) {
      continue;
    }
    const std::vector<heading> headings = handoff::find_headings(text);
    if (headings.size() < min_headings) continue;

    document d;
    d.name = file;
    d.bytes = text.size();
    const projection before = handoff::project(text, without, artifact);
    const projection after = handoff::project(text, with, artifact);
    const std::set<std::size_t> listed = listed_lines(after.text);
    if (listed.size() != after.outline_listed) {
      std::cerr << file << ": read " << listed.size() << " outline entries, the projection lists " << after.outline_listed << "\n";
      return 1;
    }
    std::set<std::size_t> heading_lines;
    for (const heading& h : headings) {
      heading_lines.insert(h.line);
      d.headings.add(h.level);
      if (shown(before, h.line)) d.before.add(h.level);
      if (shown(after, h.line) || listed.count(h.line) > 0) d.after.add(h.level);
    }
    for (const std::size_t line : listed) {
      if (heading_lines.count(line) == 0) {
        std::cerr << file << ": the outline lists line " << line << ", where no heading starts\n";
        return 1;
      }
    }
    d.shown_before = before.head_bytes + before.tail_bytes;
    d.shown_after = after.head_bytes + after.tail_bytes;
    std::vector<double> time_before;
    std::vector<double> time_after;
    for (int r = 0; r < rounds; ++r) {
      for (const bool outline : {false, true}) {
        const auto start = std::chrono::steady_clock::now();
        const projection p = handoff::project(text, outline ? with : without, artifact);
        const auto stop = std::chrono::steady_clock::now();
        if (p.text.size() > with.max_bytes) return 1;
        (outline ? time_after : time_before).push_back(std::chrono::duration<double, std::micro>(stop - start).count());
      }
    }
    d.us_before = median_us(time_before);
    d.us_after = median_us(time_after);
    docs.push_back(d);
  }
  if (docs.empty()) {
    std::cerr << "no document over 16 KiB with " << min_headings << " headings or more among the files given\n";
    return 1;
  }

  std::cout << "| document | KB | headings (L1-2) | reachable before | after | L1-2 before | L1-2 after | head+tail bytes before | after | µs before | after |\n";
  std::cout << "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const document& d : docs) {
    std::cout << "| " << d.name << " | " << d.bytes / 1024 << " | " << d.headings.all << " (" << d.headings.major << ") | "
              << percent(d.before.all, d.headings.all) << " | " << percent(d.after.all, d.headings.all) << " | "
              << percent(d.before.major, d.headings.major) << " | " << percent(d.after.major, d.headings.major) << " | "
              << d.shown_before << " | " << d.shown_after << " | " << d.us_before << " | " << d.us_after << " |\n";
  }
  const auto changelog = [](const document& d) {
    std::string name = d.name.substr(d.name.rfind('/') + 1);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* word : {"changelog", "changes", "history", "news", "release-notes"}) {
      if (name.find(word) != std::string::npos) return true;
    }
    return false;
  };
  summarise(docs, "documents", [&](const document& d) { return !changelog(d); });
  summarise(docs, "change logs", changelog);
  return 0;
}
