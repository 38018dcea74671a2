#include "tests/calibration_table.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "costmodel/device_profile.h"
#include "costmodel/model_analysis.h"
#include "tests/calibration_cases.h"

namespace autoshard::testing {
namespace {

bool IsTimeFact(const proto::CalibrationFact& f) {
  return f.kind() == "throughput" || f.kind() == "latency";
}

// 15541.2 -> "15,541"; below 100: three significant digits.
std::string Figure(double x) {
  if (x < 100) return absl::StrFormat("%.3g", x);
  const std::string digits = absl::StrFormat("%.0f", x);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string FigureWithUnit(const TimeError& r, double x) {
  return r.kind == "latency" ? absl::StrFormat("%.3f ms", x * 1e3)
                             : absl::StrCat(Figure(x), " /s");
}

// Display names of the calibration models.
std::string ModelName(const std::string& model) {
  static const std::map<std::string, std::string> kNames = {
      {"resnet50", "ResNet-50"},
      {"bert_base", "BERT-Base SL128"},
      {"bert_large", "BERT-Large SL128"},
      {"vit_b16", "ViT-B/16"},
      {"swin_tiny", "Swin-Tiny"},
      {"roformer_v2_small", "RoFormerV2-small SL128"}};
  auto it = kNames.find(model);
  return it == kNames.end() ? model : it->second;
}

}  // namespace

bool HeldOutByRule(const proto::CalibrationFacts& facts,
                   const proto::CalibrationFact& fact) {
  if (!IsTimeFact(fact)) return false;
  std::vector<std::pair<int64_t, std::string>> same;
  for (const auto& f : facts.facts()) {
    if (IsTimeFact(f) && f.model() == fact.model())
      same.emplace_back(f.batch(), f.id());
  }
  std::sort(same.begin(), same.end());
  for (size_t i = 0; i < same.size(); ++i) {
    if (same[i].second == fact.id()) return i % 3 == 1;
  }
  return false;
}

absl::StatusOr<std::vector<TimeError>> TimeErrors(
    const proto::CalibrationFacts& facts) {
  std::vector<TimeError> rows;
  for (const auto& f : facts.facts()) {
    if (!IsTimeFact(f)) continue;
    auto profile = LoadDeviceProfile(f.device());
    if (!profile.ok()) return profile.status();
    auto plan = PlanFact(f, *profile);
    if (!plan.ok()) {
      return absl::Status(plan.status().code(),
                          absl::StrCat(f.id(), ": ", plan.status().message()));
    }
    TimeError r;
    r.id = f.id();
    r.model = f.model();
    r.kind = f.kind();
    r.batch = f.batch();
    r.fitted = f.fitted();
    r.published = f.figure();
    r.predicted = PredictedFigure(f, *plan);
    r.error = r.predicted / r.published - 1;
    const ShardingProblem& problem = plan->analysis->problem;
    for (int32_t n = 0; n < problem.num_nodes(); ++n) {
      if (!problem.is_constant[n]) r.op_classes.push_back(problem.op_class[n]);
    }
    std::sort(r.op_classes.begin(), r.op_classes.end());
    r.op_classes.erase(std::unique(r.op_classes.begin(), r.op_classes.end()),
                       r.op_classes.end());
    rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(),
            [](const TimeError& a, const TimeError& b) {
              return std::tie(a.model, a.batch, a.id) <
                     std::tie(b.model, b.batch, b.id);
            });
  return rows;
}

double AbsErrorP90(const std::vector<TimeError>& rows, bool fitted) {
  std::vector<double> e;
  for (const TimeError& r : rows) {
    if (r.fitted == fitted) e.push_back(std::abs(r.error));
  }
  if (e.empty()) return 0;
  std::sort(e.begin(), e.end());
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * e.size()));
  return e[std::max<size_t>(rank, 1) - 1];
}

double AbsErrorMax(const std::vector<TimeError>& rows, bool fitted) {
  double worst = 0;
  for (const TimeError& r : rows) {
    if (r.fitted == fitted) worst = std::max(worst, std::abs(r.error));
  }
  return worst;
}

std::string CalibrationTableMarkdown(const std::vector<TimeError>& rows) {
  std::string out =
      "| model | batch | kind | in the fit | published | predicted | error | "
      "fact |\n|---|---|---|---|---|---|---|---|\n";
  int held = 0, fitted = 0;
  for (const TimeError& r : rows) {
    (r.fitted ? fitted : held) += 1;
    absl::StrAppend(&out, "| ", ModelName(r.model), " | ", r.batch, " | ",
                    r.kind, " | ", r.fitted ? "fitted" : "**held out**", " | ",
                    FigureWithUnit(r, r.published), " | ",
                    FigureWithUnit(r, r.predicted), " | ",
                    absl::StrFormat("%+.1f%%", 100 * r.error), " | `", r.id,
                    "` |\n");
  }
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "\nFitted (%d facts): largest |error| %.1f%%. Held out (%d facts): "
          "90th percentile of |error| %.1f%% (nearest rank), largest %.1f%%.\n",
          fitted, 100 * AbsErrorMax(rows, true), held,
          100 * AbsErrorP90(rows, false), 100 * AbsErrorMax(rows, false)));
  return out;
}

}  // namespace autoshard::testing
