// Catalogue of server CPUs (the hosts parameter servers run on): cores, clock, FLOP per cycle, memory bandwidth.
#pragma once

#include <string>
#include <vector>

namespace ddlsim::platform {

/** @brief One server's CPUs as the vendor's product specification describes them. A CPU host of this entry has
 *  speed = peak_fp32_flops(); its memory bandwidth bounds the work of a parameter server on it (docs/frameworks.md,
 *  "Parameter servers as machines"). */
struct CpuSpec {
  std::string name;              ///< catalogue key, also the `cpu` property of platform hosts
  int sockets = 1;               ///< CPU packages in the server
  int cores_per_socket = 1;      ///< physical cores per package
  double clock_hz = 0;           ///< base clock, Hz
  int fp32_flop_per_cycle = 0;   ///< per core: SIMD lanes x FMA units x 2
  double memory_bytes_per_s = 0; ///< bytes/s, whole server: sockets x channels x transfer rate x 8 bytes
  std::string source;            ///< where every number was read

  /** Theoretical FP32 peak, FLOP/s: sockets x cores x clock x FLOP per cycle. */
  double peak_fp32_flops() const { return sockets * cores_per_socket * clock_hz * fp32_flop_per_cycle; }
};

/** @brief Every catalogued CPU server. */
const std::vector<CpuSpec>& cpu_catalog();

/** @brief The entry generated platforms give every node's CPU host (an assumption, stated in their comment). */
const CpuSpec& default_cpu();

/** @brief Entry by name (case-sensitive); nullptr if not catalogued. */
const CpuSpec* find_cpu(const std::string& name);

/** @brief Catalogued names, comma separated. */
std::string known_cpus();

} // namespace ddlsim::platform
