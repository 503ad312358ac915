// `hwt report`: one self-contained HTML page about finished `hwt train` runs — each run's
// config, hardware, timings, loss, throughput and learning-rate curves, evaluation results,
// energy and cost, and for several runs their curves overlaid and the comparison `hwt compare`
// makes (analysis/run_compare.h).
#pragma once

#include <string>
#include <vector>

namespace hwt {

// The page for the run folders `dirs` (each holding run.json and metrics.jsonl); InputError
// naming a folder that is not a finished run.
std::string run_report_html(const std::vector<std::string>& dirs);

}  // namespace hwt
