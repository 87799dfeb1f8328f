// Platforms and workloads built for tests: small, contention-free, with known alpha and beta.
#pragma once

#include "proto/workload.pb.h"

#include <string>

namespace ddlsim::test {

/** @brief Parameters of a star: every host has its own split-duplex link to a central switch, so a route
 *  host i -> host j crosses link i (up) and link j (down): latency 2 x link_latency, bandwidth link_bw. */
struct StarSpec {
  int hosts = 2;
  double link_bytes_per_s = 1e9;
  double link_latency_s = 1e-6;
  double speed_flops = 12e12;   ///< host speed
  std::string gpu = "P40";      ///< gpu property
};

/** @brief Writes the star platform as SimGrid XML into a fresh temporary file and returns its path. */
std::string write_star_platform(const StarSpec& spec);

/** @brief A workload of one layer with no compute, only `bytes` of gradient: one allreduce per iteration. */
proto::Workload single_tensor_workload(std::uint64_t bytes);

} // namespace ddlsim::test
