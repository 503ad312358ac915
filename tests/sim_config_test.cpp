// Accelerator and design-space files: the shipped ones load, bad ones fail with one clear line
// naming the file and the key.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "accel/design_space.h"
#include "core/error.h"
#include "core/files.h"
#include "core/paths.h"

namespace hwt::accel {
namespace {

const HardwareLibrary& lib() {
  return default_hardware_library();
}

std::string shipped(const std::string& name) {
  return require_shipped_file("hardware/accel/" + name);
}

class TempToml {
 public:
  explicit TempToml(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("hwt_sim_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++) + ".toml"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempToml() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// A shipped design's text with one line replaced (or appended when `from` is empty).
std::string design_with(const std::string& design, const std::string& from, const std::string& to) {
  std::string s = read_file(shipped("designs/" + design + ".toml"));
  if (from.empty()) return s + to + "\n";
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

std::string edge_with(const std::string& from, const std::string& to) {
  return design_with("edge", from, to);
}

std::string load_error(const std::string& text) {
  TempToml t(text);
  try {
    load_accel_config(t.path(), lib());
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(t.path()), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(SimConfig, ShippedDesignsLoad) {
  const AccelConfig edge = load_accel_config(shipped("designs/edge.toml"), lib());
  EXPECT_EQ(edge.pes, 64);
  EXPECT_EQ(edge.memory.type, "lpddr3");
  const AccelConfig server = load_accel_config(shipped("designs/server.toml"), lib());
  EXPECT_EQ(server.pes, 512);
  EXPECT_EQ(server.memory.type, "hbm");
}

TEST(SimConfig, FpgaDesignLoadsWithItsDeviceAndLibrary) {
  const std::string path = shipped("designs/u50.toml");
  const HardwareLibrary fpga = design_library(path);
  EXPECT_EQ(fpga.clock_mhz, 300);
  EXPECT_EQ(fpga.module("mac_lane_16").dynamic_mw, 54.95);
  EXPECT_NE(fpga.module_file.find("modules_u50.toml"), std::string::npos);
  EXPECT_EQ(design_library(shipped("designs/edge.toml")).module("mac_lane_16").dynamic_mw,
            lib().module("mac_lane_16").dynamic_mw);  // no `library`: the default

  const AccelConfig u50 = load_accel_config(path, fpga);
  ASSERT_TRUE(u50.fpga.has_value());
  EXPECT_EQ(u50.fpga->dsp_slices, 5952);
  EXPECT_EQ(u50.lanes() * u50.macs_per_lane * u50.fpga->dsps_per_mac, 5120);
  EXPECT_EQ(u50.weight_buffer_mb + u50.mask_buffer_mb, u50.fpga->bram_mb);
  EXPECT_EQ(u50.activation_buffer_mb, u50.fpga->uram_mb);
  EXPECT_EQ(u50.clock_mhz, 300);
  EXPECT_EQ(u50.word_bits, 32);
  EXPECT_EQ(resolve_memory(u50, fpga).bandwidth_gbps, 316);
}

TEST(SimConfig, FpgaDesignsMustFitTheirDevice) {
  const auto u50_error = [](const std::string& from, const std::string& to) {
    return load_error(design_with("u50", from, to));
  };
  // 5 PEs: 1280 MACs x 5 slices = 6400 > 5952.
  EXPECT_NE(u50_error("count = 4", "count = 5")
                .find("fpga.dsp_slices 5952 is fewer than the 1280 "
                      "MACs x 5 DSP slices the design needs"),
            std::string::npos);
  EXPECT_NE(u50_error("weight_mb = 5.78125", "weight_mb = 6").find("fpga.bram_mb"),
            std::string::npos);
  EXPECT_NE(u50_error("activation_mb = 22.5", "activation_mb = 23").find("fpga.uram_mb"),
            std::string::npos);
  EXPECT_NE(u50_error("dsps_per_mac = 5", "").find("fpga.dsps_per_mac is missing"),
            std::string::npos);
  EXPECT_NE(u50_error("dsps_per_mac = 5", "dsps_per_mac = 0").find("fpga.dsps_per_mac"),
            std::string::npos);
  EXPECT_NE(u50_error("uram_mb = 22.5", "uram_mb = 22.5\nluts = 872000").find("fpga.luts"),
            std::string::npos);
  EXPECT_NE(u50_error("library = \"modules_u50\"", "library = \"modules_u5\"")
                .find("library 'modules_u5' is neither a file nor a shipped name"),
            std::string::npos);
}

TEST(SimConfig, ShippedSpaceHasTheElectorSize) {
  const DesignSpace s = load_design_space(shipped("spaces/acceltran.toml"), lib());
  EXPECT_EQ(s.size() / s.dataflows.size(), 7'425'000u);  // "about 7.4M" without loop orders
  EXPECT_EQ(s.dataflows.size(), 24u);
  int64_t batch = 0;
  const AccelConfig last = s.design(s.size() - 1, &batch);
  EXPECT_EQ(batch, 32);
  EXPECT_EQ(last.pes, 1024);
  EXPECT_EQ(last.memory.type, "hbm");
}

TEST(SimConfig, ErrorsNameFileAndKey) {
  EXPECT_NE(load_error(edge_with("count = 64", "count = 0")).find("pe.count"), std::string::npos);
  EXPECT_NE(load_error(edge_with("count = 64", "cuont = 64")).find("pe.cuont is not a known key"),
            std::string::npos);
  EXPECT_NE(load_error(edge_with("macs_per_lane = 16", "macs_per_lane = 8"))
                .find("pe.macs_per_lane=8 has no MAC lane"),
            std::string::npos);
  EXPECT_NE(load_error(edge_with("type = \"lpddr3\"", "type = \"ddr5\"")).find("memory.type"),
            std::string::npos);
  EXPECT_NE(load_error(edge_with("banks = 16", "banks = 3")).find("banks-ranks-channels"),
            std::string::npos);
  EXPECT_NE(load_error(edge_with("dataflow = \"bijk\"", "dataflow = \"bijj\"")).find("bijk"),
            std::string::npos);
  EXPECT_NE(load_error(edge_with("activation_mb = 4", "activation_mb = \"4\""))
                .find("buffers.activation_mb must be a number"),
            std::string::npos);
  EXPECT_NE(load_error(edge_with("technology_nm = 14", "technology_nm = 2")).find("technology_nm"),
            std::string::npos);
  EXPECT_NE(load_error(edge_with("[tile]", "[tile")).find(":"), std::string::npos);  // syntax
  EXPECT_NE(load_error(edge_with("", "colour = \"red\"")).find("colour"), std::string::npos);
}

TEST(SimConfig, MissingFileIsAnInputError) {
  EXPECT_THROW(load_accel_config("/nonexistent/accel.toml", lib()), InputError);
}

TEST(SimConfig, SpaceErrorsNameTheKey) {
  TempToml t(
      "name = \"x\"\n[choices]\nbatch = [4]\ntile_b = [1]\ntile_xy = [16]\npes = [64]\n"
      "mac_lanes = [16]\nmacs_per_lane = [16, 4]\nsoftmax_units = [4]\nactivation_mb = [4]\n"
      "weight_mb = [8]\nmask_mb = [1]\ndataflow = [\"bijk\"]\n"
      "memory = [{type = \"hbm\", banks = 32, ranks = 1, channels = 4}]\n");
  try {
    load_design_space(t.path(), lib());
    ADD_FAILURE() << "macs_per_lane = 4 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("macs_per_lane=4"), std::string::npos) << e.what();
  }
}

TEST(SimConfig, CliReportsBadInputOnOneLineWithExitCode2) {
  TempToml t(edge_with("count = 64", "count = -3"));
  const std::string cmd = std::string(HWT_BINARY) + " sim --accel " + t.path() + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  const int status = pclose(f);
  EXPECT_EQ(WEXITSTATUS(status), 2) << out;
  EXPECT_NE(out.find("pe.count"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

}  // namespace
}  // namespace hwt::accel
