#include "sim/scenario/expectation_judge.h"

#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/scenario/expectation_checker.h"

namespace tessera::sim {
namespace {

TimePoint At(Duration d) { return TimePoint{} + d; }

}  // namespace

ExpectationJudge::ExpectationJudge(const Scenario& scenario, const SimState& state,
                                   std::function<void(size_t, const ExpectationResult&)> failed)
    : scenario_(scenario), state_(state), failed_(std::move(failed)) {
  results_.resize(scenario_.expectations.size());
  for (size_t i = 0; i < results_.size(); ++i) results_[i].expectation = &scenario_.expectations[i];
  decided_.assign(results_.size(), false);
}

std::optional<std::string> ExpectationJudge::Evaluate(const Expectation& e) const {
  std::vector<std::string> seen;
  for (const Check& check : e.checks) {
    if (std::optional<std::string> s = EvaluateCheck(check, e, state_)) {
      seen.push_back(fmt::format("{}: {}", check.key, *s));
    }
  }
  if (seen.empty()) return std::nullopt;
  return fmt::format("{}", fmt::join(seen, "; "));
}

void ExpectationJudge::Decide(size_t i, bool passed, TimePoint t, std::string seen) {
  decided_[i] = true;
  results_[i].passed = passed;
  results_[i].at = t;
  results_[i].seen = std::move(seen);
  if (!passed) failed_(i, results_[i]);
}

void ExpectationJudge::Observe(TimePoint t) {
  for (size_t i = 0; i < results_.size(); ++i) {
    if (decided_[i]) continue;
    const Expectation& e = scenario_.expectations[i];
    const TimePoint due = At(e.time);
    switch (e.timing) {
      case Timing::kAt:
        if (t == due) {
          std::optional<std::string> seen = Evaluate(e);
          Decide(i, !seen, t, seen.value_or(""));
        }
        break;
      case Timing::kBy:
        if (t <= due) {
          std::optional<std::string> seen = Evaluate(e);
          if (!seen) {
            Decide(i, true, t, "");
          } else if (t == due) {
            Decide(i, false, t, *seen);
          }
        }
        break;
      case Timing::kAlways:
        if (std::optional<std::string> seen = Evaluate(e)) Decide(i, false, t, *seen);
        break;
      case Timing::kEnd:
        break;
    }
  }
}

void ExpectationJudge::ObserveCut(TimePoint t, int64_t instants) {
  for (size_t i = 0; i < results_.size(); ++i) {
    if (decided_[i]) continue;
    decided_[i] = true;
    results_[i].passed = false;
    results_[i].at = t;
    results_[i].seen = fmt::format("not judged: the run was stopped after {} instants, at {}",
                                   instants, FormatTime(t));
  }
}

void ExpectationJudge::ObserveEnd(TimePoint t) {
  for (size_t i = 0; i < results_.size(); ++i) {
    if (decided_[i]) continue;
    const Expectation& e = scenario_.expectations[i];
    switch (e.timing) {
      case Timing::kEnd: {
        std::optional<std::string> seen = Evaluate(e);
        Decide(i, !seen, t, seen.value_or(""));
        break;
      }
      case Timing::kAlways:
        Decide(i, true, t, "");
        break;
      case Timing::kAt:
      case Timing::kBy:
        Decide(
            i, false, t,
            fmt::format("the run ended at {}, before {}", FormatTime(t), FormatTime(At(e.time))));
        break;
    }
  }
}

}  // namespace tessera::sim
