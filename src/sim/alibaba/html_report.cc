#include "sim/alibaba/html_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "fmt/format.h"

namespace tessera::sim::alibaba {
namespace {

constexpr double kWidth = 760, kHeight = 380;
constexpr double kLeft = 64, kRight = 170, kTop = 36, kBottom = 48;

// A "nice" tick step (1, 2 or 5 x 10^k) giving about `target` ticks over `span`.
double TickStep(double span, int target) {
  if (!(span > 0)) return 1;
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

std::string Fmt(double v) {
  if (std::abs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (std::isnan(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

std::string Cell(double v, int digits = 2) {
  return std::isnan(v) ? "&ndash;" : fmt::format("{:.{}f}", v, digits);
}

std::string Page(const ReportContext& context, const std::string& body) {
  return fmt::format(
      R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{0}</title>
<style>
body {{ font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px auto;
       max-width: 980px; color: #222; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 17px; margin-top: 28px; }}
code, pre {{ background: #f4f4f4; padding: 2px 4px; border-radius: 3px; font-size: 12px; }}
pre {{ padding: 8px; white-space: pre-wrap; word-break: break-all; }}
table {{ border-collapse: collapse; font-size: 13px; margin: 8px 0; }}
th, td {{ border: 1px solid #ccc; padding: 4px 8px; text-align: right; white-space: nowrap; }}
th {{ background: #f0f0f0; white-space: normal; }} td:first-child, th:first-child {{ text-align: left; }}
.note {{ color: #555; font-size: 13px; }}
svg {{ display: block; margin: 8px 0; }}
</style>
</head>
<body>
<h1>{0}</h1>
<p class="note">Command:</p>
<pre>{1}</pre>
<p class="note">Nodes: <code>{2}</code> &middot; Pods: <code>{3}</code></p>
{4}
</body>
</html>
)",
      HtmlEscape(context.title), HtmlEscape(context.command), HtmlEscape(context.nodes_path),
      HtmlEscape(context.pods_path), body);
}

std::vector<std::pair<double, double>> CurvePoints(const Curve& c, bool unallocated,
                                                   int32_t from = 0) {
  std::vector<std::pair<double, double>> out;
  for (int32_t x = from; x < kCurvePoints; ++x) {
    const double v = c.At(x);
    out.emplace_back(x, unallocated ? 100.0 - v : v);
  }
  return out;
}

// Per-x 25% and 75% quantiles of a metric over one policy's runs.
std::vector<std::tuple<double, double, double>> Band(const std::vector<PaperRunResult>& runs,
                                                     const std::string& policy,
                                                     Curve PaperRunResult::*metric,
                                                     bool unallocated, int32_t from) {
  std::vector<std::tuple<double, double, double>> band;
  int32_t count = 0;
  for (const PaperRunResult& r : runs) count += r.policy == policy;
  if (count < 2) return band;
  std::vector<double> values;
  for (int32_t x = from; x < kCurvePoints; ++x) {
    values.clear();
    for (const PaperRunResult& r : runs) {
      if (r.policy != policy) continue;
      const double v = (r.*metric).At(x);
      values.push_back(unallocated ? 100.0 - v : v);
    }
    band.emplace_back(x, Quantile(values, 0.25), Quantile(values, 0.75));
  }
  return band;
}

Chart CurveChart(std::string title, std::string y_label, const std::vector<PaperRunResult>& runs,
                 const std::vector<PolicySummary>& summaries, const ExpectedResults* expected,
                 Curve PaperRunResult::*metric, Curve PolicySummary::*median,
                 ExpectedMetric expected_metric, bool unallocated, int32_t from) {
  Chart chart;
  chart.title = std::move(title);
  chart.x_label = "Arrived workload (% of cluster GPU capacity)";
  chart.y_label = std::move(y_label);
  chart.x_min = from;
  chart.x_max = kMaxArrivedPct;
  const std::string workload = runs.empty() ? "" : runs.front().workload;
  for (const PolicySummary& s : summaries) {
    ChartSeries line;
    line.name = PolicyDisplayName(s.policy);
    line.color = PolicyColor(s.policy);
    line.points = CurvePoints(s.*median, unallocated, from);
    line.band = Band(runs, s.policy, metric, unallocated, from);
    chart.series.push_back(std::move(line));
    if (expected == nullptr) continue;
    std::optional<Curve> theirs = expected->Median(expected_metric, workload, s.policy);
    if (!theirs) continue;
    ChartSeries dashed;
    dashed.name = PolicyDisplayName(s.policy) + " (artifact)";
    dashed.color = PolicyColor(s.policy);
    dashed.dashed = true;
    dashed.points = CurvePoints(*theirs, unallocated, from);
    chart.series.push_back(std::move(dashed));
  }
  return chart;
}

std::string SummaryTable(const std::vector<PolicySummary>& summaries, const std::string& workload,
                         const ExpectedResults* expected) {
  std::string rows;
  for (const PolicySummary& s : summaries) {
    double theirs = std::nan(""), their_frag = std::nan(""), their_ratio = std::nan("");
    if (expected != nullptr) {
      if (auto c = expected->Median(ExpectedMetric::kAllocation, workload, s.policy)) {
        theirs = 100.0 - c->At(100);
      }
      if (auto c = expected->Median(ExpectedMetric::kFragAmount, workload, s.policy)) {
        their_frag = c->At(100);
      }
      if (auto c = expected->Median(ExpectedMetric::kFragRatio, workload, s.policy)) {
        their_ratio = c->At(100);
      }
    }
    rows += fmt::format(
        "<tr><td><span style=\"color:{}\">&#9632;</span> {}</td><td>{}</td><td>{}&ndash;{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        PolicyColor(s.policy), HtmlEscape(PolicyDisplayName(s.policy)), Cell(s.unallocated_median),
        Cell(s.unallocated_q25), Cell(s.unallocated_q75), Cell(theirs),
        Cell(s.unallocated_median - theirs), Cell(s.frag_amount_median), Cell(their_frag),
        Cell(s.frag_ratio_median, 1), Cell(their_ratio, 1), Cell(s.failed_tasks_median, 0), s.runs);
  }
  return fmt::format(
      "<table>\n<tr><th>Policy</th><th>Unallocated GPU % (median)</th><th>25&ndash;75%</th>"
      "<th>Artifact</th><th>Diff</th><th>Fragment % of GPUs</th><th>Artifact</th>"
      "<th>Frag ratio %</th><th>Artifact</th><th>Failed tasks</th><th>Runs</th></tr>\n{}"
      "</table>\n",
      rows);
}

// The packing bound under the summary table: its median, range and value per seed.
std::string BoundSection(std::span<const PackingBound> bounds) {
  if (bounds.empty()) return "";
  std::string seeds;
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (const PackingBound& b : bounds) {
    seeds += fmt::format("<td>{}: {}</td>", b.seed, Cell(b.unallocated_pct_at_100));
    low = std::min(low, b.unallocated_pct_at_100);
    high = std::max(high, b.unallocated_pct_at_100);
  }
  return fmt::format(
      "<p><b>Packing bound</b> (LP relaxation, docs/simulator.md): no placement of the same "
      "arrivals leaves fewer than <b>{}</b>% of the GPUs unallocated at 100% arrived workload "
      "(median over seeds; {}&ndash;{}). Per seed:</p>\n<table><tr>{}</tr></table>\n",
      Cell(MedianBound(bounds)), Cell(low), Cell(high), seeds);
}

std::string RunsTable(const std::vector<PaperRunResult>& runs) {
  std::string rows;
  for (const PaperRunResult& r : runs) {
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{:.2f}</td></tr>\n",
        HtmlEscape(PolicyDisplayName(r.policy)), r.seed, Cell(100.0 - r.gpu_allocation.At(100)),
        Cell(r.frag_amount.At(100)), Cell(r.frag_ratio.At(100), 1), r.arrived_tasks, r.clones,
        r.failed_tasks, r.wall_seconds);
  }
  return fmt::format(
      "<details><summary>Every run</summary>\n<table>\n<tr><th>Policy</th><th>Seed</th>"
      "<th>Unallocated % at 100</th><th>Fragment %</th><th>Frag ratio %</th><th>Arrived</th>"
      "<th>Clones</th><th>Failed</th><th>Seconds</th></tr>\n{}</table>\n</details>\n",
      rows);
}

// The time axis of replay charts: the arrival window and a little after it (long-running tasks
// can stretch a replay far past the last arrival with nothing happening but their end), in days,
// or in hours when that is under two days.
struct TimeAxis {
  double end = 0;         // in `unit`s
  double unit_s = 86400;  // seconds per unit
  std::string label = "Simulated time (days)";
};

TimeAxis TimeAxisOf(const std::vector<ReplayResult>& runs) {
  double last_arrival = 0, end = 0;
  for (const ReplayResult& r : runs) {
    last_arrival = std::max(last_arrival, r.last_arrival_s);
    end = std::max(end, r.simulated_seconds);
  }
  TimeAxis axis;
  const double end_s = std::min(end, 1.1 * last_arrival);
  if (end_s < 2 * 86400) {
    axis.unit_s = 3600;
    axis.label = "Simulated time (hours)";
  }
  axis.end = end_s / axis.unit_s;
  return axis;
}

Chart TimeChart(std::string title, std::string y_label, const std::vector<ReplayResult>& runs,
                double ReplaySample::*field) {
  const TimeAxis axis = TimeAxisOf(runs);
  Chart chart;
  chart.title = std::move(title);
  chart.x_label = axis.label;
  chart.y_label = std::move(y_label);
  chart.x_max = axis.end;
  for (const ReplayResult& r : runs) {
    ChartSeries s;
    s.name = fmt::format("{} (seed {})", PolicyDisplayName(r.policy), r.seed);
    s.color = PolicyColor(r.policy);
    for (const ReplaySample& p : r.samples) s.points.emplace_back(p.time_s / axis.unit_s, p.*field);
    chart.series.push_back(std::move(s));
  }
  return chart;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string PolicyColor(const std::string& policy) {
  if (policy == "random") return "#7f7f7f";
  if (policy == "dotprod") return "#1f77b4";
  if (policy == "clustering") return "#ff7f0e";
  if (policy == "packing") return "#2ca02c";
  if (policy == "bestfit") return "#9467bd";
  if (policy == "fgd") return "#d62728";
  return "#17becf";
}

std::string RenderSvg(const Chart& chart) {
  Range xr, yr;
  for (const ChartSeries& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (std::isnan(y)) continue;
      xr.Add(x);
      yr.Add(y);
    }
    for (const auto& [x, lo, hi] : s.band) yr.Add(lo), yr.Add(hi);
  }
  double x0 = chart.x_min, x1 = chart.x_max, y0 = chart.y_min, y1 = chart.y_max;
  if (x0 == x1) {
    x0 = xr.empty() ? 0 : xr.lo;
    x1 = xr.empty() ? 1 : xr.hi;
  }
  if (y0 == y1) {
    y0 = yr.empty() ? 0 : yr.lo;
    y1 = yr.empty() ? 1 : yr.hi;
    const double pad = std::max(0.05 * (y1 - y0), 0.5);
    y0 = std::max(0.0, y0 - pad);
    y1 += pad;
  }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto sx = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * pw; };
  auto sy = [&](double y) { return kTop + (1 - (y - y0) / (y1 - y0)) * ph; };
  // Several charts share one page: the clip path's id must be unique in the document.
  const std::string clip_id = fmt::format("clip{:x}", std::hash<std::string>{}(chart.title));

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n"
      "<text x=\"{2}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{3}</text>\n",
      kWidth, kHeight, kLeft, HtmlEscape(chart.title));
  svg += fmt::format(
      "<clipPath id=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
      "</clipPath>\n",
      clip_id, kLeft, kTop, pw, ph);
  const double xs = TickStep(x1 - x0, 10), ys = TickStep(y1 - y0, 8);
  for (double t = std::ceil(x0 / xs) * xs; t <= x1 + 1e-9; t += xs) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        sx(t), kTop, kTop + ph, kTop + ph + 16, Fmt(t));
  }
  for (double t = std::ceil(y0 / ys) * ys; t <= y1 + 1e-9; t += ys) {
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, sy(t), kLeft + pw, kLeft - 6, sy(t) + 4, Fmt(t));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n"
      "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      kLeft, kTop, pw, ph, kLeft + pw / 2, kHeight - 10, HtmlEscape(chart.x_label), kTop + ph / 2,
      HtmlEscape(chart.y_label));

  svg += fmt::format("<g clip-path=\"url(#{})\">\n", clip_id);
  for (const ChartSeries& s : chart.series) {
    if (s.band.empty()) continue;
    std::string upper, lower;
    for (const auto& [x, lo, hi] : s.band) {
      if (std::isnan(lo) || std::isnan(hi)) continue;
      upper += fmt::format("{:.1f},{:.1f} ", sx(x), sy(hi));
      lower = fmt::format("{:.1f},{:.1f} ", sx(x), sy(lo)) + lower;
    }
    svg += fmt::format(
        "<polygon points=\"{}{}\" fill=\"{}\" fill-opacity=\"0.15\" "
        "stroke=\"none\"/>\n",
        upper, lower, s.color);
  }
  for (const ChartSeries& s : chart.series) {
    std::string path;
    bool pen_down = false;
    for (const auto& [x, y] : s.points) {
      if (std::isnan(y) || x < x0 || x > x1) {
        pen_down = false;
        continue;
      }
      path += fmt::format("{}{:.1f},{:.1f} ", pen_down ? "L" : "M", sx(x), sy(y));
      pen_down = true;
    }
    if (path.empty()) continue;
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n", path,
                       s.color, s.dashed ? 1.2 : 1.8, s.dashed ? " stroke-dasharray=\"5,3\"" : "");
  }
  svg += "</g>\n";
  double ly = kTop + 6;
  for (const ChartSeries& s : chart.series) {
    const double lx = kLeft + pw + 12;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
        "<text x=\"{5}\" y=\"{6}\">{7}</text>\n",
        lx, ly, lx + 22, s.color, s.dashed ? " stroke-dasharray=\"5,3\"" : "", lx + 28, ly + 4,
        HtmlEscape(s.name));
    ly += 16;
  }
  svg += "</svg>\n";
  return svg;
}

std::string PaperReportHtml(const ReportContext& context, const std::vector<PaperRunResult>& runs,
                            const std::vector<PolicySummary>& summaries,
                            const ExpectedResults* expected, std::span<const PackingBound> bounds) {
  const std::string workload = runs.empty() ? "" : runs.front().workload;
  std::vector<uint64_t> seeds;
  for (const PaperRunResult& r : runs) {
    if (std::find(seeds.begin(), seeds.end(), r.seed) == seeds.end()) seeds.push_back(r.seed);
  }
  double wall = 0;
  for (const PaperRunResult& r : runs) wall += r.wall_seconds;
  const bool has_expected =
      expected != nullptr && !summaries.empty() &&
      expected->Median(ExpectedMetric::kAllocation, workload, summaries.front().policy);
  std::string body = fmt::format(
      "<p>Workload <b>{}</b>, {} run(s): {} polic{} &times; {} seed(s) ({}&ndash;{}), inflated to "
      "{} &times; the cluster's GPU capacity. Lines are the median over seeds, the band the "
      "25&ndash;75% range{}. Summed run time {:.1f} s.</p>\n",
      HtmlEscape(workload), runs.size(), summaries.size(), summaries.size() == 1 ? "y" : "ies",
      seeds.size(), seeds.empty() ? 0 : seeds.front(), seeds.empty() ? 0 : seeds.back(),
      runs.empty() ? 0.0 : runs.front().inflate,
      has_expected ? "; dashed lines are the FGD artifact's medians over its seeds 42&ndash;51"
                   : "",
      wall);
  body += "<h2>At 100% arrived workload</h2>\n";
  body += SummaryTable(summaries, workload, expected);
  body += BoundSection(bounds);
  body += RenderSvg(CurveChart("Unallocated GPU vs arrived workload (saturated part)",
                               "Unallocated GPU (%)", runs, summaries, expected,
                               &PaperRunResult::gpu_allocation, &PolicySummary::gpu_allocation,
                               ExpectedMetric::kAllocation, /*unallocated=*/true, /*from=*/80));
  body +=
      RenderSvg(CurveChart("Unallocated GPU vs arrived workload", "Unallocated GPU (%)", runs,
                           summaries, expected, &PaperRunResult::gpu_allocation,
                           &PolicySummary::gpu_allocation, ExpectedMetric::kAllocation, true, 0));
  body +=
      RenderSvg(CurveChart("Fragment amount F(M) vs arrived workload", "Fragment (% of all GPUs)",
                           runs, summaries, expected, &PaperRunResult::frag_amount,
                           &PolicySummary::frag_amount, ExpectedMetric::kFragAmount, false, 0));
  body += RenderSvg(CurveChart("Fragmentation ratio vs arrived workload", "F(M) / free GPU (%)",
                               runs, summaries, expected, &PaperRunResult::frag_ratio,
                               &PolicySummary::frag_ratio, ExpectedMetric::kFragRatio, false, 0));
  body += RunsTable(runs);
  body +=
      "<p class=\"note\">Definitions: the FGD paper (Weng et al., USENIX ATC'23) and its "
      "artifact's protocol; see docs/simulator.md. Unallocated GPU = 100 &minus; allocated "
      "milli-GPU / capacity. Fragment = F(M) as % of all GPUs; frag ratio = F(M) / free "
      "milli-GPU.</p>\n";
  return Page(context, body);
}

std::string ReplayReportHtml(const ReportContext& context, const std::vector<ReplayResult>& runs) {
  std::string rows;
  for (const ReplayResult& r : runs) {
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td></tr>\n",
        HtmlEscape(PolicyDisplayName(r.policy)), r.seed, r.submitted, r.placed_on_arrival,
        r.placed_after_wait, r.failed, r.still_pending, Cell(r.wait_p50_s, 0),
        Cell(r.wait_p95_s, 0), Cell(r.gpu_alloc_time_mean_pct), Cell(r.frag_ratio_time_mean_pct, 1),
        r.wall_seconds);
  }
  std::string body = fmt::format(
      "<p>Time-driven replay: tasks arrive at their creation time and hold their resources until "
      "their deletion time; a task that does not fit waits in a FIFO queue. Charts show the "
      "arrival window; tasks may run on after it.</p>\n<table>\n"
      "<tr><th>Policy</th><th>Seed</th><th>Submitted</th><th>Placed on arrival</th>"
      "<th>Placed after waiting</th><th>Failed</th><th>Pending at end</th><th>Wait p50 (s)</th>"
      "<th>Wait p95 (s)</th><th>GPU alloc % (time mean)</th><th>Frag ratio % (time mean)</th>"
      "<th>Seconds</th></tr>\n{}</table>\n",
      rows);
  body += RenderSvg(TimeChart("GPU allocation over time", "Allocated GPU (%)", runs,
                              &ReplaySample::gpu_alloc_pct));
  body += RenderSvg(TimeChart("Fragmentation ratio over time", "F(M) / free GPU (%)", runs,
                              &ReplaySample::frag_ratio_pct));
  body += RenderSvg(TimeChart("CPU allocation over time", "Allocated CPU (%)", runs,
                              &ReplaySample::cpu_alloc_pct));
  const TimeAxis axis = TimeAxisOf(runs);
  Chart pending;
  pending.title = "Pending tasks over time";
  pending.x_label = axis.label;
  pending.y_label = "Pending tasks";
  pending.x_max = axis.end;
  for (const ReplayResult& r : runs) {
    ChartSeries s;
    s.name = fmt::format("{} (seed {})", PolicyDisplayName(r.policy), r.seed);
    s.color = PolicyColor(r.policy);
    for (const ReplaySample& p : r.samples) {
      s.points.emplace_back(p.time_s / axis.unit_s, static_cast<double>(p.pending));
    }
    pending.series.push_back(std::move(s));
  }
  body += RenderSvg(pending);
  return Page(context, body);
}

}  // namespace tessera::sim::alibaba
