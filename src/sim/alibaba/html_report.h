// HTML reports of the trace simulator: one self-contained file (inline CSS and SVG charts, no
// scripts, no external assets) that a browser opens offline.
//
// Paper mode: unallocated GPU % against arrived workload % per policy (median over seeds, with
// the 25-75% band; the artifact's median dashed beside it when given), in full and zoomed on the
// saturated part, fragment amount and fragmentation ratio against arrived workload, and the
// table at x = 100 beside the artifact's numbers.
// Replay mode: allocation, fragmentation and pending tasks over simulated time per policy.
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/alibaba/expected_results.h"
#include "sim/alibaba/packing_bound.h"
#include "sim/alibaba/paper_runner.h"
#include "sim/alibaba/replay_runner.h"
#include "sim/alibaba/sweep.h"

namespace tessera::sim::alibaba {

// One line of a chart.
struct ChartSeries {
  std::string name;
  std::string color;  // CSS color
  bool dashed = false;
  std::vector<std::pair<double, double>> points;  // (x, y); NaN y values break the line
  // Optional band (x, low, high), drawn translucent under the line.
  std::vector<std::tuple<double, double, double>> band;
};

struct Chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  double x_min = 0, x_max = 0;  // equal: from the data
  double y_min = 0, y_max = 0;  // equal: from the data
  std::vector<ChartSeries> series;
};

// An <svg> element.
std::string RenderSvg(const Chart& chart);

// The CSS color of a paper policy (a neutral one for others).
std::string PolicyColor(const std::string& policy);

struct ReportContext {
  std::string title;
  std::string command;  // the command line, shown verbatim
  std::string nodes_path;
  std::string pods_path;
};

// `expected` may be null.
// `bounds` (may be empty) adds the packing bound per seed and its median under the table.
std::string PaperReportHtml(const ReportContext& context, const std::vector<PaperRunResult>& runs,
                            const std::vector<PolicySummary>& summaries,
                            const ExpectedResults* expected,
                            std::span<const PackingBound> bounds = {});

std::string ReplayReportHtml(const ReportContext& context, const std::vector<ReplayResult>& runs);

// Escapes &, <, >, " and '.
std::string HtmlEscape(std::string_view text);

}  // namespace tessera::sim::alibaba
