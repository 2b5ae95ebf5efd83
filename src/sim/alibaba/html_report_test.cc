#include "sim/alibaba/html_report.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/alibaba/sweep.h"
#include "sim/alibaba/test_traces.h"

namespace tessera::sim::alibaba {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HtmlReportTest, SelfContainedPageWithChartsAndTheTableAt100) {
  auto input =
      testing::MakeInput(testing::kTestNodes, std::string(testing::kPodHeader) +
                                                  "p0,4000,1024,1,500,,LS,Running,0,100,0\n"
                                                  "p1,4000,1024,1,1000,,LS,Running,0,100,0\n"
                                                  "p2,4000,1024,0,0,,LS,Running,0,100,0\n");
  SweepOptions options;
  options.policies = {"fgd", "bestfit"};
  options.seeds = {1, 2};
  auto runs = RunSweep(*input, options);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ExpectedResults expected;
  expected.allocation = *ParseExpectedCsv(
      "workload,sc_policy,tune,seed,total_gpus,99,100\ntest,06-FGD,1.3,42,12,94,95.23\n", "e");
  ReportContext context{.title = "FGD <reproduction>",
                        .command = "tessera sim --x 'a&b'",
                        .nodes_path = "n.csv",
                        .pods_path = "p.csv"};
  PackingBound bound;
  bound.seed = 1;
  bound.unallocated_pct_at_100 = 1.25;
  const std::vector<PackingBound> bounds = {bound};
  const std::string html =
      PaperReportHtml(context, *runs, SummarizeByPolicy(*runs), &expected, bounds);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("FGD &lt;reproduction&gt;"));
  EXPECT_THAT(html, HasSubstr("tessera sim --x &#39;a&amp;b&#39;"));
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("BestFit"));
  EXPECT_THAT(html, HasSubstr("FGD (artifact)"));  // the artifact's dashed line
  EXPECT_THAT(html, HasSubstr("<td>4.77</td>"));   // its number at x = 100
  EXPECT_THAT(html, HasSubstr("Packing bound"));
  EXPECT_THAT(html, HasSubstr("<td>1: 1.25</td>"));  // the bound of seed 1
  // No external assets: the only URL is the SVG namespace.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
}

TEST(HtmlReportTest, SvgSkipsMissingPointsAndScalesToTheData) {
  Chart chart;
  chart.title = "t";
  chart.x_label = "x";
  chart.y_label = "y";
  ChartSeries s;
  s.name = "s";
  s.color = "#000";
  s.points = {{0, 1}, {1, std::nan("")}, {2, 3}, {3, 4}};
  chart.series.push_back(s);
  const std::string svg = RenderSvg(chart);
  EXPECT_THAT(svg, HasSubstr("<path d=\"M"));
  // The NaN breaks the line: two "M" moves in one path.
  const size_t first = svg.find("<path d=\"M");
  const size_t end = svg.find('"', first + 9);
  const std::string d = svg.substr(first + 9, end - first - 9);
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2);
}

TEST(HtmlReportTest, EscapesText) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}

}  // namespace
}  // namespace tessera::sim::alibaba
