// The GPU catalog: per GPU its multiprocessors, peak rates per precision, memory, power, price
// and the links it reaches other GPUs over, each number with the document it comes from.
// hardware/gpus.toml ships with hwt; users add or replace entries with their own files
// (--catalog FILE), merged by name.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/precision.h"

namespace hwt {

// Architectures the GEMM model knows tile shapes and alignment rules for: NVIDIA's, AMD's CDNA 2
// (MI250X) and CDNA 3 (MI300X), and Google's TPUs. hwt runs on NVIDIA GPUs (and CPUs) only; the
// others are priced by the models, never measured (docs/shape.md, "Beyond NVIDIA").
enum class GpuArch : uint8_t { Volta, Turing, Ampere, Ada, Hopper, Cdna2, Cdna3, Tpu };

std::string_view arch_name(GpuArch a);
// NVIDIA's architectures, the ones hwt's CUDA backend runs on and its constants were fitted on.
bool is_nvidia(GpuArch a);
// What the arch's `sms` count: "SMs", "CUs" (AMD compute units) or "MXUs" (TPU matrix units).
std::string_view multiprocessor_name(GpuArch a);

// How a GPU talks to the other GPUs of a data-parallel run: NVIDIA's NVLink, PCIe, InfiniBand,
// AMD's Infinity Fabric (xGMI) between the GPUs of a node, Google's inter-chip interconnect (ICI)
// between the TPU chips of a slice.
enum class LinkKind : uint8_t { NvLink, Pcie, Ib, Xgmi, Ici };

std::string_view link_name(LinkKind k);  // "nvlink", "pcie", "ib", "xgmi", "ici"
std::optional<LinkKind> parse_link_kind(std::string_view name);
std::string link_names();  // "nvlink, pcie, ib, xgmi, ici", for messages

// One link as a ring collective sees it from one GPU.
struct LinkSpec {
  double line_gbs = 0;    // GB/s per direction, datasheet
  double bus_gbs = 0;     // the bus bandwidth NCCL's ring reaches (docs/estimate.md)
  double latency_us = 0;  // per step of the ring
  std::string source;     // where these numbers come from, or what is assumed
};

struct GpuSpec {
  std::string name;
  std::vector<std::string> aliases;  // other spellings, e.g. the CUDA device name
  GpuArch arch = GpuArch::Ampere;
  int sms = 0;  // streaming multiprocessors; AMD: compute units; TPU: matrix units (MXUs)
  double boost_clock_mhz = 0;
  double memory_gb = 0;
  double memory_bandwidth_gbs = 0;  // GB/s, datasheet
  double l2_mb = 0;                 // 0 where no such cache is published (TPUs)
  double tdp_w = 0;
  double price_per_hour = 0;                     // USD per GPU-hour
  std::map<Precision, double> tensor_tflops;     // dense (no 2:4 sparsity), fp32 accumulate
  std::map<Precision, double> cuda_core_tflops;  // without tensor cores
  std::string source;                            // where the hardware numbers come from
  std::string price_source;                      // where the price comes from
  std::map<std::string, std::string> sources;    // per-key exceptions to `source`
  std::map<LinkKind, LinkSpec> links;            // GPU-to-GPU links; none for most GPUs
  std::string origin;                            // catalog file the entry was read from

  // The best rate for matrix products in p: tensor cores (matrix cores, MXUs) when they support
  // it, else CUDA cores (tf32 without matrix support runs as fp32). 0 when the GPU cannot run p.
  double peak_tflops(Precision p) const;
  // The precision a run that asks for p trains in here: p where the GPU runs it, fp16 for bf16
  // where it has no bf16 (Volta, Turing: Chen & Sköld train in fp16 there), bf16 (or its stand-in)
  // for fp8 where it has no fp8 (before Ada and Hopper); nullopt otherwise.
  std::optional<Precision> precision_for(Precision p) const;
  // The document a key's number comes from.
  const std::string& source_of(const std::string& key) const;
  // The link's figures; InputError when the catalog has none for this GPU.
  const LinkSpec& link(LinkKind k) const;
  // The GPU's own link to the other GPUs of its node or slice (NVLink, Infinity Fabric, ICI), if
  // the catalog has one.
  std::optional<LinkKind> scale_up_link() const;
};

class GpuCatalog {
 public:
  // Reads a catalog file; an entry whose name is already known replaces the old one.
  void load_file(const std::string& path);
  // Same from text; `origin` names it in error messages.
  void load_string(std::string_view text, const std::string& origin);

  // Case-, space- and dash-insensitive match on names and aliases; InputError listing the
  // known GPUs when none matches.
  const GpuSpec& find(std::string_view name) const;
  // The entry whose name or alias occurs in a CUDA device name ("NVIDIA H200"); null if none.
  const GpuSpec* match_device(std::string_view device_name) const;

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  std::string known_names() const;

 private:
  void add(GpuSpec g);  // replaces an entry of the same name
  std::vector<GpuSpec> gpus_;
};

// The shipped hardware/gpus.toml, then each extra file in order.
GpuCatalog load_gpu_catalog(const std::vector<std::string>& extra_files = {});

}  // namespace hwt
