// `ddlsim sweep`: the grid of runs, parsed from the command line (lists of option values, pure, no process).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ddlsim::cli {

/** @brief One swept (or fixed) key: an option of `run`/`collective` ("ranks"), a `--cluster` key ("cluster.nodes")
 *  or a workload generation key ("batch"), with its values in the order given. */
struct SweepAxis {
  std::string key;                 ///< column name
  std::vector<std::string> values; ///< at least one; more than one makes it a column of the CSV
};

/** @brief The sweep's own options, and the grid of child command lines. */
struct SweepSpec {
  bool collective = false;            ///< points are `ddlsim collective` runs (else `ddlsim run`)
  std::vector<SweepAxis> axes;        ///< every option given with a value, in command-line order
  std::vector<std::string> fixed;     ///< passed to every point as given (switches, every --cfg)
  std::size_t cluster_first_axis = 0; ///< axes [first, first + count) are --cluster keys
  std::size_t cluster_axes = 0;       ///< 0: no --cluster
  bool generate = false;              ///< --model/--gpu/--batch/--precision: the workload is generated
  std::string csv;                    ///< --csv FILE ('-': standard output)
  int jobs = 1;                       ///< simulations at once
  bool quiet = false;                 ///< -q
  std::string slurm_dir;              ///< --slurm DIR: write a Slurm job array instead of running
  bool submit = false;                ///< --submit: also sbatch it
  std::size_t chunk = 0;              ///< points per array task (0: default)
  long task = -1;                     ///< --task I (inside an array task): run only chunk I
  std::string collect_dir;            ///< --collect DIR: merge the array's CSVs
  std::vector<std::string> forwarded; ///< the grid's words as given (for the Slurm script), without sweep options
};

/** @brief One point of the grid: its swept values (one per column) and the words after `run`/`collective`. */
struct SweepPoint {
  std::size_t index = 0;               ///< position in the grid (the first axis varies slowest)
  std::vector<std::string> key;        ///< the values of the swept axes, in column order
  std::vector<std::string> args;       ///< options for the child (without the workload a generated point needs)
  std::vector<std::string> generation; ///< model, gpu, batch, precision when SweepSpec::generate
  std::string generation_id;           ///< "resnet50/P40/32/fp32": points that share a generated workload
};

/** @brief Options of the workload generator a sweep may list (`--model`, `--gpu`, `--batch`, `--precision`). */
inline const std::vector<std::string>& generation_keys()
{
  static const std::vector<std::string> keys = {"model", "gpu", "batch", "precision"};
  return keys;
}

/** @brief Parses the words after `sweep`. A value lists alternatives separated by '|'; by ',' too, except in the
 *  options whose single value holds commas (--cluster, --hosts, --ps-hosts, --algorithm); a repeated option adds
 *  alternatives. In --cluster each KEY=V1|V2 is its own axis. ConfigError (one line) for anything malformed. */
SweepSpec parse_sweep_args(const std::vector<std::string>& args);

/** @brief The swept axes (more than one value): the key columns of the CSV. */
std::vector<std::string> swept_columns(const SweepSpec& spec);

/** @brief Number of points (product of the axes' sizes). */
std::size_t grid_size(const SweepSpec& spec);

/** @brief Every point, in grid order. */
std::vector<SweepPoint> expand_grid(const SweepSpec& spec);

/** @brief At most this many points in one sweep. */
inline constexpr std::size_t kMaxSweepPoints = 100000;

} // namespace ddlsim::cli
