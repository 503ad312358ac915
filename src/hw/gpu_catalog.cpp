#include "hw/gpu_catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/error.h"
#include "core/paths.h"
#include "core/toml_reader.h"

namespace hwt {
namespace {

constexpr const char* kWhat = "GPU catalog";

constexpr std::array<std::pair<std::string_view, GpuArch>, 8> kArchs = {{
    {"volta", GpuArch::Volta},
    {"turing", GpuArch::Turing},
    {"ampere", GpuArch::Ampere},
    {"ada", GpuArch::Ada},
    {"hopper", GpuArch::Hopper},
    {"cdna2", GpuArch::Cdna2},
    {"cdna3", GpuArch::Cdna3},
    {"tpu", GpuArch::Tpu},
}};

constexpr std::array<std::pair<std::string_view, LinkKind>, 5> kLinks = {{
    {"nvlink", LinkKind::NvLink},
    {"pcie", LinkKind::Pcie},
    {"ib", LinkKind::Ib},
    {"xgmi", LinkKind::Xgmi},
    {"ici", LinkKind::Ici},
}};

// "a, b, c" of the first names of a table, for error messages.
template <typename Table>
std::string names_of(const Table& table) {
  std::vector<std::string_view> names;
  for (const auto& entry : table) names.push_back(entry.first);
  return fmt::format("{}", fmt::join(names, ", "));
}

// Numbers every entry must give, and the field each fills.
struct NumberKey {
  std::string_view key;
  double GpuSpec::*field;
  bool allow_zero;
};
constexpr std::array<NumberKey, 6> kNumbers = {{
    {"boost_clock_mhz", &GpuSpec::boost_clock_mhz, false},
    {"memory_gb", &GpuSpec::memory_gb, false},
    {"memory_bandwidth_gbs", &GpuSpec::memory_bandwidth_gbs, false},
    {"l2_mb", &GpuSpec::l2_mb, true},
    {"tdp_w", &GpuSpec::tdp_w, true},
    {"price_per_hour", &GpuSpec::price_per_hour, true},
}};

// Keys `sources` may name: the entry's numbers.
constexpr std::array<std::string_view, 10> kSourcedKeys = {
    "arch",  "sms",   "boost_clock_mhz", "memory_gb",     "memory_bandwidth_gbs",
    "l2_mb", "tdp_w", "price_per_hour",  "tensor_tflops", "cuda_core_tflops"};

std::string normalise(std::string_view s) {
  std::string o;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

double number_value(const TomlReader& t, const std::string& key, bool allow_zero) {
  const double v = t.number(key);
  if (v < 0 || (!allow_zero && v == 0))
    t.fail(key, fmt::format("must be {}, got {}", allow_zero ? "zero or more" : "positive", v));
  return v;
}

std::string required_string(const TomlReader& t, const std::string& key) {
  std::string s = t.string(key);
  if (s.empty()) t.fail(key, "must be a non-empty string");
  return s;
}

std::map<Precision, double> rate_table(const TomlReader& entry, const std::string& key) {
  std::map<Precision, double> rates;
  if (!entry.has(key)) return rates;
  const TomlReader t = entry.table(key);
  for (const std::string& name : t.keys()) {
    const auto p = parse_precision(name);
    if (!p) t.fail(name, "is not a precision (use fp32, tf32, bf16, fp16 or fp8)");
    rates[*p] = number_value(t, name, false);
  }
  return rates;
}

// [gpu.links.<kind>] tables: each with its bandwidths, ring-step latency and source.
std::map<LinkKind, LinkSpec> link_table(const TomlReader& entry) {
  std::map<LinkKind, LinkSpec> links;
  if (!entry.has("links")) return links;
  const TomlReader t = entry.table("links");
  for (const std::string& name : t.keys()) {
    const auto kind = parse_link_kind(name);
    if (!kind) t.fail(name, fmt::format("is not a link (use one of {})", names_of(kLinks)));
    const TomlReader l = t.table(name);
    LinkSpec& s = links[*kind];
    s.line_gbs = number_value(l, "line_gbs", false);
    s.bus_gbs = number_value(l, "bus_gbs", false);
    s.latency_us = number_value(l, "latency_us", true);
    s.source = required_string(l, "source");
    l.reject_unknown();
  }
  return links;
}

GpuSpec parse_entry(const TomlReader& raw, size_t index) {
  GpuSpec g;
  g.name = required_string(raw, "name");
  const TomlReader t = raw.labelled(fmt::format("gpu entry {} ('{}')", index + 1, g.name));
  if (t.has("aliases")) g.aliases = t.strings("aliases");
  const std::string arch = required_string(t, "arch");
  auto ai = std::find_if(kArchs.begin(), kArchs.end(), [&](auto& p) { return p.first == arch; });
  if (ai == kArchs.end())
    t.fail("arch", fmt::format("'{}' is not an architecture (known: {})", arch, names_of(kArchs)));
  g.arch = ai->second;
  g.sms = static_cast<int>(t.positive_integer("sms"));
  for (const NumberKey& k : kNumbers)
    g.*k.field = number_value(t, std::string(k.key), k.allow_zero);
  g.tensor_tflops = rate_table(t, "tensor_tflops");
  g.cuda_core_tflops = rate_table(t, "cuda_core_tflops");
  if (!g.cuda_core_tflops.count(Precision::Fp32))
    t.fail("cuda_core_tflops.fp32", "is missing (every GPU has an fp32 CUDA-core rate)");
  g.links = link_table(t);
  g.source = required_string(t, "source");
  g.price_source = required_string(t, "price_source");
  if (t.has("sources")) {
    const TomlReader s = t.table("sources");
    for (const std::string& k : s.keys()) {
      if (std::find(kSourcedKeys.begin(), kSourcedKeys.end(), k) == kSourcedKeys.end())
        s.fail(k, "names no number of the entry");
      g.sources[k] = required_string(s, k);
    }
  }
  t.reject_unknown();
  return g;
}

std::vector<GpuSpec> parse_catalog(const TomlReader& file) {
  if (!file.has("gpu")) {
    for (const std::string& key : file.keys())
      file.fail(key, "is not a known key (the entries are [[gpu]] tables)");
    file.fail("gpu", "is missing: the entries are [[gpu]] tables");
  }
  std::vector<GpuSpec> out;
  const std::vector<TomlReader> entries = file.tables("gpu");
  for (size_t i = 0; i < entries.size(); ++i) out.push_back(parse_entry(entries[i], i));
  file.reject_unknown();
  return out;
}

}  // namespace

std::string_view arch_name(GpuArch a) {
  for (const auto& [name, arch] : kArchs)
    if (arch == a) return name;
  return "?";
}

bool is_nvidia(GpuArch a) {
  return a != GpuArch::Cdna2 && a != GpuArch::Cdna3 && a != GpuArch::Tpu;
}

std::string_view multiprocessor_name(GpuArch a) {
  if (a == GpuArch::Tpu) return "MXUs";
  return is_nvidia(a) ? "SMs" : "CUs";
}

std::string_view link_name(LinkKind k) {
  for (const auto& [name, kind] : kLinks)
    if (kind == k) return name;
  return "?";
}

std::optional<LinkKind> parse_link_kind(std::string_view name) {
  for (const auto& [n, kind] : kLinks)
    if (n == name) return kind;
  return std::nullopt;
}

std::string link_names() {
  return names_of(kLinks);
}

std::optional<LinkKind> GpuSpec::scale_up_link() const {
  for (LinkKind k : {LinkKind::NvLink, LinkKind::Xgmi, LinkKind::Ici})
    if (links.count(k)) return k;
  return std::nullopt;
}

const LinkSpec& GpuSpec::link(LinkKind k) const {
  auto it = links.find(k);
  if (it == links.end())
    fail_input("{} has no {} figures in the GPU catalog (add them with --catalog FILE)", name,
               link_name(k));
  return it->second;
}

double GpuSpec::peak_tflops(Precision p) const {
  if (auto it = tensor_tflops.find(p); it != tensor_tflops.end()) return it->second;
  if (auto it = cuda_core_tflops.find(p); it != cuda_core_tflops.end()) return it->second;
  if (p == Precision::Tf32) return peak_tflops(Precision::Fp32);
  return 0;
}

std::optional<Precision> GpuSpec::precision_for(Precision p) const {
  if (peak_tflops(p) > 0) return p;
  if (p == Precision::Bf16 && peak_tflops(Precision::Fp16) > 0) return Precision::Fp16;
  if (p == Precision::Fp8) return precision_for(Precision::Bf16);
  return std::nullopt;
}

const std::string& GpuSpec::source_of(const std::string& key) const {
  if (key == "price_per_hour") return price_source;
  auto it = sources.find(key);
  if (it == sources.end()) it = sources.find(key.substr(0, key.find('.')));
  return it == sources.end() ? source : it->second;
}

void GpuCatalog::load_file(const std::string& path) {
  for (GpuSpec& g : parse_catalog(TomlReader::from_file(path, kWhat))) {
    g.origin = path;
    add(std::move(g));
  }
}

void GpuCatalog::load_string(std::string_view text, const std::string& origin) {
  for (GpuSpec& g : parse_catalog(TomlReader::from_string(text, origin, kWhat))) {
    g.origin = origin;
    add(std::move(g));
  }
}

void GpuCatalog::add(GpuSpec g) {
  auto same = std::find_if(gpus_.begin(), gpus_.end(), [&](const GpuSpec& o) {
    return normalise(o.name) == normalise(g.name);
  });
  if (same != gpus_.end())
    *same = std::move(g);
  else
    gpus_.push_back(std::move(g));
}

const GpuSpec& GpuCatalog::find(std::string_view name) const {
  const std::string want = normalise(name);
  for (const GpuSpec& g : gpus_) {
    if (normalise(g.name) == want) return g;
    for (const std::string& a : g.aliases)
      if (normalise(a) == want) return g;
  }
  fail_input("unknown GPU '{}' (known: {}; add your own with --catalog FILE)", name, known_names());
}

const GpuSpec* GpuCatalog::match_device(std::string_view device_name) const {
  const std::string dev = normalise(device_name);
  const GpuSpec* best = nullptr;
  size_t best_len = 0;
  for (const GpuSpec& g : gpus_) {
    std::vector<std::string> names = g.aliases;
    names.push_back(g.name);
    for (const std::string& n : names) {
      const std::string s = normalise(n);
      if (!s.empty() && dev.find(s) != std::string::npos && s.size() > best_len)
        best = &g, best_len = s.size();
    }
  }
  return best;
}

std::string GpuCatalog::known_names() const {
  std::vector<std::string> names;
  for (const GpuSpec& g : gpus_) names.push_back(g.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

GpuCatalog load_gpu_catalog(const std::vector<std::string>& extra_files) {
  GpuCatalog c;
  c.load_file(require_shipped_file("hardware/gpus.toml"));
  for (const std::string& f : extra_files) c.load_file(f);
  return c;
}

}  // namespace hwt
