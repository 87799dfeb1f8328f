// Command-line options of the schedules (`ddlsim run`): how gradients become aggregations and when they run.
#include "cli/schedule_options.hpp"

#include "cli/options.hpp"
#include "collectives/algorithm_table.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "dag/plans.hpp"

#include <algorithm>
#include <exception>

namespace po = boost::program_options;

namespace ddlsim::cli {
namespace {

/** "sequential (...) | wfbp (...)": the schedule table. */
std::string schedule_help()
{
  std::vector<std::string> rows;
  for (const auto& e : dag::schedule_table())
    rows.push_back(std::string(e.name) + " (" + e.summary + ")");
  return join(rows, " | ");
}

/** The schedules that read `knob`, as "fusion" or "fusion and buckets". */
std::string readers(unsigned knob)
{
  std::vector<std::string> names;
  for (const auto& e : dag::schedule_table())
    if (e.knobs & knob)
      names.emplace_back(e.name);
  return names.size() <= 1 ? join(names) : join({names.begin(), names.end() - 1}) + " and " + names.back();
}

std::uint64_t positive_bytes(const std::string& text, const std::string& option)
{
  const std::uint64_t bytes = parse_bytes(text, option);
  if (bytes == 0)
    throw ConfigError(option + " must be > 0 bytes (got '" + text + "')");
  return bytes;
}

/** Refuses every knob the user changed that `schedule` does not read. */
void refuse_unread(const ScheduleCli& s, const dag::ScheduleEntry& schedule)
{
  const ScheduleCli d;
  struct Knob {
    bool given;
    const char* option;
    unsigned bit;
  };
  const Knob knobs[] = {{s.fusion_bytes != d.fusion_bytes, "--fusion-bytes", dag::kKnobFusion},
                        {s.fusion_cycle != d.fusion_cycle, "--fusion-cycle", dag::kKnobFusion},
                        {s.bucket_bytes != d.bucket_bytes, "--bucket-bytes", dag::kKnobBuckets},
                        {s.first_bucket_bytes != d.first_bucket_bytes, "--first-bucket-bytes", dag::kKnobBuckets},
                        {s.partition_bytes != d.partition_bytes, "--partition-bytes", dag::kKnobPartition},
                        {s.credit_bytes != d.credit_bytes, "--credit-bytes", dag::kKnobPartition},
                        {s.comm_streams != d.comm_streams, "--comm-streams", dag::kKnobStreams}};
  for (const auto& k : knobs)
    if (k.given && !(schedule.knobs & k.bit))
      throw ConfigError(std::string(k.option) + " has no effect with --schedule " + schedule.name + " (only " +
                        readers(k.bit) + (readers(k.bit).find(' ') == std::string::npos ? " reads" : " read") + " it)");
}

/** N of "model/N" (a positive integer), or 0 when `text` is not of that form. */
unsigned model_divisor(const std::string& text, const std::string& option)
{
  const std::string prefix = "model/";
  if (text.compare(0, prefix.size(), prefix) != 0)
    return 0;
  const std::string n = text.substr(prefix.size());
  if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos || std::stoul(n) == 0)
    throw ConfigError(option + " model/N needs a whole number N from 1 to 999999 (got '" + text + "')");
  return static_cast<unsigned>(std::stoul(n));
}

bool on_off(const std::string& text, const char* option)
{
  if (text == "on" || text == "off")
    return text == "on";
  throw ConfigError(std::string(option) + " must be on or off (got '" + text + "')");
}

} // namespace

po::options_description schedule_options(ScheduleCli& s)
{
  po::options_description d("Schedule", kHelpColumns, kHelpDescriptionColumns);
  auto add = d.add_options();
  add("schedule", po::value(&s.schedule)->default_value(s.schedule)->value_name("NAME"), schedule_help().c_str());
  add("update", po::value(&s.update)->default_value(s.update)->value_name("WHEN"),
      "global (one update after every aggregation) | per-layer (layer l's update once its gradient is aggregated; "
      "the next forward of layer l waits only for it)");
  add("io-prefetch", po::value(&s.io_prefetch)->default_value(s.io_prefetch)->value_name("N"),
      "batches loaded ahead on their own stream (0: loading and copy on the critical path)");
  add("comm-streams", po::value(&s.comm_streams)->default_value(s.comm_streams)->value_name("K"),
      "aggregations in flight at once (aggregation k on stream k mod K; they share links)");
  add("fusion-bytes", po::value(&s.fusion_bytes)->default_value(s.fusion_bytes)->value_name("SIZE"),
      "fusion: buffer size (Horovod's HOROVOD_FUSION_THRESHOLD since v0.21)");
  add("fusion-cycle", po::value(&s.fusion_cycle)->default_value(s.fusion_cycle)->value_name("TIME"),
      "fusion: a buffer is flushed this long after its first gradient (HOROVOD_CYCLE_TIME since v0.21)");
  add("bucket-bytes", po::value(&s.bucket_bytes)->default_value(s.bucket_bytes)->value_name("SIZE"),
      "buckets: bucket cap (DDP's bucket_cap_mb), or model/N: the workload's gradient bytes / N");
  add("first-bucket-bytes", po::value(&s.first_bucket_bytes)->default_value(s.first_bucket_bytes)->value_name("SIZE"),
      "buckets: the first bucket's cap (DDP's first bucket), or model/N");
  add("partition-bytes", po::value(&s.partition_bytes)->default_value(s.partition_bytes)->value_name("SIZE"),
      "priority: partition size (ByteScheduler: 1e6 FP32 parameters)");
  add("credit-bytes", po::value(&s.credit_bytes)->default_value(s.credit_bytes)->value_name("SIZE"),
      "priority: bytes in flight at most (ByteScheduler: 4e6 FP32 parameters)");
  add("warmup", po::value(&s.warmup)->default_value(s.warmup)->value_name("K"),
      "iterations left out of the reported mean (must be < --iterations, or 0)");
  add("gpu-interference", po::value(&s.gpu_interference)->default_value(s.gpu_interference)->value_name("F"),
      "share of a GPU's compute speed taken by an aggregation on that GPU while it runs, in [0, 1), or auto (NCCL's "
      "rings / the GPU's SMs): compute that overlaps communication runs at 1 - F of its speed (0: overlap is free; "
      "docs/frameworks.md, interference)");
  add("pcie-contention", po::value(&s.pcie_contention)->default_value(s.pcie_contention)->value_name("on|off"),
      "on: the input's host-to-device copy and a host-staged stack's staging copies are transfers over the GPU's PCIe "
      "link from its node's CPU host, sharing it (off: fixed times)");
  add("cpu-contention", po::value(&s.cpu_contention)->default_value(s.cpu_contention)->value_name("on|off"),
      "on: the stack's per-message overheads (one core each) and the input pipeline's loading are work on the node's "
      "CPU host, sharing it (off: fixed times)");
  add("explain-merge", po::bool_switch(&s.explain_merge),
      "fusion, buckets, mgwfbp: print which layers each aggregation carries");
  return d;
}

ScheduleChoice resolve(const ScheduleCli& s, const collectives::AlgorithmSpec& algorithm,
                       const collectives::CollectiveOptions& aggregation, int iterations)
{
  ScheduleChoice c;
  dag::ScheduleOptions& o = c.options;
  o.schedule = dag::parse_schedule(s.schedule);
  o.update = dag::parse_update(s.update);
  const dag::ScheduleEntry& schedule = dag::schedule_entry(o.schedule);
  refuse_unread(s, schedule);
  if (s.io_prefetch < 0)
    throw ConfigError("--io-prefetch must be >= 0 (got " + std::to_string(s.io_prefetch) + ")");
  if (s.comm_streams < 1)
    throw ConfigError("--comm-streams must be >= 1 (got " + std::to_string(s.comm_streams) + ")");
  o.io_prefetch = s.io_prefetch;
  o.comm_streams = s.comm_streams;
  o.fusion_bytes = positive_bytes(s.fusion_bytes, "--fusion-bytes");
  o.fusion_cycle_s = parse_seconds(s.fusion_cycle, "--fusion-cycle");
  c.bucket_divisor = model_divisor(s.bucket_bytes, "--bucket-bytes");
  c.first_bucket_divisor = model_divisor(s.first_bucket_bytes, "--first-bucket-bytes");
  if (c.bucket_divisor == 0)
    o.bucket_bytes = positive_bytes(s.bucket_bytes, "--bucket-bytes");
  if (c.first_bucket_divisor == 0)
    o.first_bucket_bytes = positive_bytes(s.first_bucket_bytes, "--first-bucket-bytes");
  o.partition_bytes = positive_bytes(s.partition_bytes, "--partition-bytes");
  o.credit_bytes = positive_bytes(s.credit_bytes, "--credit-bytes");
  if (schedule.needs_per_layer_update && o.update != dag::Update::PerLayer)
    throw ConfigError("--schedule " + std::string(schedule.name) +
                      " needs --update per-layer (its gain is the next forward pass starting early)");
  const bool servers = collectives::uses_servers(algorithm, aggregation);
  o.update_on_server = servers && aggregation.ps_update == collectives::PsUpdate::Server;
  if (servers && schedule.policy != dag::CommPolicy::InOrder)
    throw ConfigError("--algorithm ps serves the aggregations in the order every rank launches them: it takes a "
                      "schedule other than " +
                      std::string(schedule.name));
  // The default warm-up (one iteration) shrinks to fit a shorter run; one the user asks for must fit.
  if (s.warmup < 0 || (s.warmup != ScheduleCli{}.warmup && s.warmup > 0 && s.warmup >= iterations))
    throw ConfigError("--warmup must be >= 0 and less than --iterations " + std::to_string(iterations) + " (got " +
                      std::to_string(s.warmup) + ")");
  c.warmup = static_cast<unsigned>(std::min(s.warmup, iterations - 1));
  if (s.explain_merge && o.schedule != dag::Schedule::Fusion && o.schedule != dag::Schedule::Buckets &&
      o.schedule != dag::Schedule::Mgwfbp)
    throw ConfigError("--explain-merge has no effect with --schedule " + std::string(schedule.name) +
                      " (only fusion, buckets and mgwfbp merge gradients)");
  c.explain_merge = s.explain_merge;
  if (s.gpu_interference == "auto") {
    c.gpu_interference_auto = true;
  } else {
    std::size_t used = 0;
    double f = -1;
    try {
      f = std::stod(s.gpu_interference, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.gpu_interference.size() || !(f >= 0 && f < 1))
      throw ConfigError("--gpu-interference must be a number in [0, 1) or auto (got '" + s.gpu_interference + "')");
    c.gpu_interference = f;
  }
  c.pcie_contention = on_off(s.pcie_contention, "--pcie-contention");
  c.cpu_contention = on_off(s.cpu_contention, "--cpu-contention");
  return c;
}

void apply_model_fractions(ScheduleChoice& s, std::uint64_t gradient_bytes)
{
  if (s.bucket_divisor > 0)
    s.options.bucket_bytes = std::max<std::uint64_t>(1, gradient_bytes / s.bucket_divisor);
  if (s.first_bucket_divisor > 0)
    s.options.first_bucket_bytes = std::max<std::uint64_t>(1, gradient_bytes / s.first_bucket_divisor);
}

proto::ScheduleConfig to_proto(const ScheduleChoice& s)
{
  const auto& o = s.options;
  proto::ScheduleConfig c;
  c.set_update(dag::to_string(o.update));
  c.set_io_prefetch(static_cast<unsigned>(o.io_prefetch));
  c.set_comm_streams(static_cast<unsigned>(o.comm_streams));
  c.set_warmup(s.warmup);
  c.set_gpu_interference(s.gpu_interference);
  c.set_gpu_interference_auto(s.gpu_interference_auto);
  c.set_pcie_contention(s.pcie_contention);
  c.set_cpu_contention(s.cpu_contention);
  switch (o.schedule) {
  case dag::Schedule::Fusion:
    c.set_fusion_bytes(o.fusion_bytes);
    c.set_fusion_cycle_s(o.fusion_cycle_s);
    break;
  case dag::Schedule::Buckets:
    c.set_bucket_bytes(o.bucket_bytes);
    c.set_first_bucket_bytes(o.first_bucket_bytes);
    break;
  case dag::Schedule::Priority:
    c.set_partition_bytes(o.partition_bytes);
    c.set_credit_bytes(o.credit_bytes);
    break;
  default:
    break;
  }
  return c;
}

} // namespace ddlsim::cli
