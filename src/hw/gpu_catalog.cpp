#include "hw/gpu_catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/error.h"
#include "core/paths.h"

namespace hwt {
namespace {

constexpr std::array<std::pair<std::string_view, GpuArch>, 5> kArchs = {{
    {"volta", GpuArch::Volta},
    {"turing", GpuArch::Turing},
    {"ampere", GpuArch::Ampere},
    {"ada", GpuArch::Ada},
    {"hopper", GpuArch::Hopper},
}};

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
    {"l2_mb", &GpuSpec::l2_mb, false},
    {"tdp_w", &GpuSpec::tdp_w, false},
    {"price_per_hour", &GpuSpec::price_per_hour, true},
}};

constexpr std::array<std::string_view, 15> kKnownKeys = {"name",
                                                         "aliases",
                                                         "arch",
                                                         "sms",
                                                         "boost_clock_mhz",
                                                         "memory_gb",
                                                         "memory_bandwidth_gbs",
                                                         "l2_mb",
                                                         "tdp_w",
                                                         "price_per_hour",
                                                         "tensor_tflops",
                                                         "cuda_core_tflops",
                                                         "source",
                                                         "price_source",
                                                         "sources"};

std::string normalise(std::string_view s) {
  std::string o;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

// Error context for one entry: "<file>: gpu entry 3 ('H200'): ".
struct Where {
  std::string origin;
  size_t index;
  std::string name;
  std::string operator()(std::string_view key) const {
    const std::string who = name.empty() ? fmt::format("gpu entry {}", index + 1)
                                         : fmt::format("gpu entry {} ('{}')", index + 1, name);
    return fmt::format("{}: {}: key '{}'", origin, who, key);
  }
};

double number_value(const toml::node* n, std::string_view key, const Where& at, bool allow_zero) {
  if (!n) fail_input("{} is missing", at(key));
  std::optional<double> v;
  if (auto i = n->as_integer()) v = static_cast<double>(i->get());
  if (auto f = n->as_floating_point()) v = f->get();
  if (!v) fail_input("{} must be a number", at(key));
  if (*v < 0 || (!allow_zero && *v == 0))
    fail_input("{} must be {}, got {}", at(key), allow_zero ? "zero or more" : "positive", *v);
  return *v;
}

std::string required_string(const toml::table& t, std::string_view key, const Where& at) {
  const toml::node* n = t.get(key);
  if (!n) fail_input("{} is missing", at(key));
  auto s = n->as_string();
  if (!s || s->get().empty()) fail_input("{} must be a non-empty string", at(key));
  return s->get();
}

std::map<Precision, double> rate_table(const toml::table& t, std::string_view key,
                                           const Where& at) {
  std::map<Precision, double> rates;
  const toml::node* n = t.get(key);
  if (!n) return rates;
  const toml::table* sub = n->as_table();
  if (!sub) fail_input("{} must be a table like {{ bf16 = 989.4 }}", at(key));
  for (const auto& [name, value] : *sub) {
    const std::string full = fmt::format("{}.{}", key, name.str());
    const auto p = parse_precision(name.str());
    if (!p) fail_input("{}: unknown precision (use fp32, tf32, bf16, fp16 or fp8)", at(full));
    rates[*p] = number_value(&value, full, at, false);
  }
  return rates;
}

GpuSpec parse_entry(const toml::table& t, const std::string& origin, size_t index) {
  Where at{origin, index, ""};
  for (const auto& [key, _] : t)
    if (std::find(kKnownKeys.begin(), kKnownKeys.end(), key.str()) == kKnownKeys.end())
      fail_input("{} is not a catalog key (known: {})", at(key.str()), fmt::join(kKnownKeys, ", "));
  GpuSpec g;
  g.name = required_string(t, "name", at);
  at.name = g.name;
  g.origin = origin;
  if (const toml::node* n = t.get("aliases")) {
    const toml::array* a = n->as_array();
    if (!a) fail_input("{} must be an array of strings", at("aliases"));
    for (const toml::node& e : *a) {
      if (!e.as_string()) fail_input("{} must be an array of strings", at("aliases"));
      g.aliases.push_back(e.as_string()->get());
    }
  }
  const std::string arch = required_string(t, "arch", at);
  auto ai = std::find_if(kArchs.begin(), kArchs.end(), [&](auto& p) { return p.first == arch; });
  if (ai == kArchs.end())
    fail_input("{}: unknown architecture '{}' (known: volta, turing, ampere, ada, hopper)",
               at("arch"), arch);
  g.arch = ai->second;
  const toml::node* sms = t.get("sms");
  if (!sms) fail_input("{} is missing", at("sms"));
  if (!sms->as_integer() || sms->as_integer()->get() <= 0)
    fail_input("{} must be a positive integer", at("sms"));
  g.sms = static_cast<int>(sms->as_integer()->get());
  for (const NumberKey& k : kNumbers)
    g.*k.field = number_value(t.get(k.key), k.key, at, k.allow_zero);
  g.tensor_tflops = rate_table(t, "tensor_tflops", at);
  g.cuda_core_tflops = rate_table(t, "cuda_core_tflops", at);
  if (!g.cuda_core_tflops.count(Precision::Fp32))
    fail_input("{} is missing (every GPU has an fp32 CUDA-core rate)", at("cuda_core_tflops.fp32"));
  g.source = required_string(t, "source", at);
  g.price_source = required_string(t, "price_source", at);
  if (const toml::node* n = t.get("sources")) {
    const toml::table* s = n->as_table();
    if (!s) fail_input("{} must be a table of key = \"document\"", at("sources"));
    for (const auto& [key, value] : *s) {
      const std::string k(key.str());
      if (k == "name" || k == "aliases" || k == "sources" || k == "source" ||
          std::find(kKnownKeys.begin(), kKnownKeys.end(), k) == kKnownKeys.end())
        fail_input("{} names no number of the entry", at("sources." + k));
      if (!value.as_string() || value.as_string()->get().empty())
        fail_input("{} must be a non-empty string", at("sources." + k));
      g.sources[k] = value.as_string()->get();
    }
  }
  return g;
}

std::vector<GpuSpec> parse_catalog(const toml::table& t, const std::string& origin) {
  for (const auto& [key, _] : t)
    if (key.str() != "gpu")
      fail_input("{}: top-level key '{}' is not allowed (entries are [[gpu]] tables)", origin,
                 key.str());
  const toml::array* entries = t.get_as<toml::array>("gpu");
  if (!entries || entries->empty()) fail_input("{}: no [[gpu]] entries", origin);
  std::vector<GpuSpec> out;
  for (size_t i = 0; i < entries->size(); ++i) {
    const toml::table* e = entries->get(i)->as_table();
    if (!e) fail_input("{}: gpu entry {} is not a table", origin, i + 1);
    out.push_back(parse_entry(*e, origin, i));
  }
  return out;
}

}  // namespace

std::string_view arch_name(GpuArch a) {
  for (const auto& [name, arch] : kArchs)
    if (arch == a) return name;
  return "?";
}

double GpuSpec::peak_tflops(Precision p) const {
  if (auto it = tensor_tflops.find(p); it != tensor_tflops.end()) return it->second;
  if (auto it = cuda_core_tflops.find(p); it != cuda_core_tflops.end()) return it->second;
  if (p == Precision::Tf32) return cuda_core_tflops.at(Precision::Fp32);
  return 0;
}

const std::string& GpuSpec::source_of(const std::string& key) const {
  if (key == "price_per_hour") return price_source;
  auto it = sources.find(key);
  if (it == sources.end()) it = sources.find(key.substr(0, key.find('.')));
  return it == sources.end() ? source : it->second;
}

void GpuCatalog::load_file(const std::string& path) {
  try {
    for (GpuSpec& g : parse_catalog(toml::parse_file(path), path)) add(std::move(g));
  } catch (const toml::parse_error& e) {
    if (!e.source().begin)
      fail_input("GPU catalog {}: cannot read the file ({})", path, e.description());
    fail_input("GPU catalog {}:{}:{}: {}", path, e.source().begin.line, e.source().begin.column,
               e.description());
  }
}

void GpuCatalog::load_string(std::string_view text, const std::string& origin) {
  try {
    for (GpuSpec& g : parse_catalog(toml::parse(text, origin), origin)) add(std::move(g));
  } catch (const toml::parse_error& e) {
    fail_input("GPU catalog {}:{}:{}: {}", origin, e.source().begin.line, e.source().begin.column,
               e.description());
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
