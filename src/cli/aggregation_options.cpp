// Command-line options of the aggregation algorithms, shared by `ddlsim run` and `ddlsim collective`.
#include "cli/aggregation_options.hpp"
#include "cli/options.hpp"

#include "common/error.hpp"
#include "common/strings.hpp"

namespace po = boost::program_options;

namespace ddlsim::cli {

namespace {

/** The algorithm names a spec uses: "ring", or both sides of "rd<=8KiB,hd"; hier also uses its inter algorithm. */
bool uses(const AggregationCli& a, const std::string& name)
{
  for (const std::string& part : split(a.algorithm, ',')) {
    const std::string alg = part.substr(0, part.find("<="));
    if (alg == name || (alg == "hier" && a.inter_algorithm == name))
      return true;
  }
  return false;
}

/** An option the algorithm never reads is an error, not a silent no-op. */
void reject_unused(const AggregationCli& a)
{
  const AggregationCli defaults;
  auto refuse = [&](const std::string& option, const std::string& readers) {
    throw ConfigError(option + " has no effect with --algorithm " + a.algorithm + " (only " + readers + " read it)");
  };
  if (a.servers != defaults.servers && !uses(a, "ps"))
    refuse("--servers", "ps");
  if (!a.ps_hosts.empty() && !uses(a, "ps"))
    refuse("--ps-hosts", "ps");
  if (a.ps_sharding != defaults.ps_sharding && !uses(a, "ps"))
    refuse("--ps-sharding", "ps");
  if (a.inter_algorithm != defaults.inter_algorithm && !uses(a, "hier"))
    refuse("--inter-algorithm", "hier");
  if (a.chunk != defaults.chunk && !uses(a, "ring") && !uses(a, "tree") && !uses(a, "dbtree"))
    refuse("--chunk-bytes", "ring, tree and dbtree");
  if (a.fidelity != defaults.fidelity && !uses(a, "ring") && !uses(a, "hd"))
    refuse("--fidelity", "ring and hd");
}

} // namespace

po::options_description aggregation_options(AggregationCli& a)
{
  po::options_description d("Aggregation", kHelpColumns, kHelpDescriptionColumns);
  d.add_options()
      ("algorithm", po::value(&a.algorithm)->default_value(a.algorithm)->value_name("NAME"),
       ("allreduce algorithm: " + collectives::known_algorithms()).c_str())
      ("msg-overhead", po::value(&a.msg_overhead)->default_value(a.msg_overhead)->value_name("TIME"),
       "software overhead added before every message (e.g. 32us), to model an MPI or gRPC stack")
      ("reduce-cost", po::value(&a.reduce_cost)->default_value(a.reduce_cost)->value_name("TIME"),
       "reduction time per byte on the reducing host (e.g. 1.5ns)")
      ("chunk-bytes", po::value(&a.chunk)->default_value(a.chunk)->value_name("SIZE"),
       "tree, dbtree: pipelining chunk (0: 1 MiB); ring: largest message, the vector is reduced in slices of "
       "P x SIZE one after the other, as NCCL does (0: one slice)")
      ("inter-algorithm", po::value(&a.inter_algorithm)->default_value(a.inter_algorithm)->value_name("NAME"),
       "hier: flat algorithm among node leaders (ring, rd, hd, tree, dbtree)")
      ("servers", po::value(&a.servers)->default_value(a.servers)->value_name("S"), "ps: number of parameter servers")
      ("ps-hosts", po::value(&a.ps_hosts)->value_name("H0,H1,..."),
       "ps: hosts of the servers (dedicated or CPU hosts); default: co-located with ranks 0..S-1")
      ("ps-sharding", po::value(&a.ps_sharding)->default_value(a.ps_sharding)->value_name("NAME"),
       "ps: split (each tensor in S byte ranges) | round-robin (tensor k on server k mod S)")
      ("fidelity", po::value(&a.fidelity)->default_value(a.fidelity)->value_name("NAME"),
       ("ring, hd: message (every transfer) | flow (ring: one flow per rank; hd: one per partner) | auto (ring: "
        "message up to " + std::to_string(collectives::kFlowAboveRanks) + " ranks, flow above; hd: message)").c_str());
  return d;
}

collectives::CollectiveOptions resolve(const AggregationCli& a)
{
  collectives::CollectiveOptions o;
  o.msg_overhead_s = parse_seconds(a.msg_overhead, "--msg-overhead");
  o.reduce_s_per_byte = parse_seconds(a.reduce_cost, "--reduce-cost");
  o.chunk_bytes = parse_bytes(a.chunk, "--chunk-bytes");
  if (o.chunk_bytes != 0 && (o.chunk_bytes < (1ULL << 10) || o.chunk_bytes > (1ULL << 30)))
    throw ConfigError("--chunk-bytes must be 0 (the algorithm's default) or between 1KiB and 1GiB (got '" + a.chunk +
                      "')");
  o.inter_algorithm = a.inter_algorithm;
  if (a.servers < 1)
    throw ConfigError("--servers must be >= 1 (got " + std::to_string(a.servers) + ")");
  o.ps_servers = a.servers;
  o.ps_hosts = parse_host_list(a.ps_hosts, "--ps-hosts");
  if (a.ps_sharding == "split")
    o.ps_sharding = collectives::PsSharding::Split;
  else if (a.ps_sharding == "round-robin")
    o.ps_sharding = collectives::PsSharding::RoundRobin;
  else
    throw ConfigError("--ps-sharding must be one of: split, round-robin (got '" + a.ps_sharding + "')");
  if (a.fidelity == "auto")
    o.fidelity = collectives::Fidelity::Auto;
  else if (a.fidelity == "message")
    o.fidelity = collectives::Fidelity::Message;
  else if (a.fidelity == "flow")
    o.fidelity = collectives::Fidelity::Flow;
  else
    throw ConfigError("--fidelity must be one of: auto, message, flow (got '" + a.fidelity + "')");
  collectives::make_collective(a.algorithm, o); // validates the name and the combination
  reject_unused(a);
  return o;
}

proto::AggregationConfig to_proto(const AggregationCli& a, const collectives::CollectiveOptions& o)
{
  proto::AggregationConfig c;
  c.set_msg_overhead_s(o.msg_overhead_s);
  c.set_reduce_s_per_byte(o.reduce_s_per_byte);
  c.set_chunk_bytes(o.chunk_bytes);
  c.set_inter_algorithm(o.inter_algorithm);
  c.set_ps_servers(static_cast<unsigned>(o.ps_servers));
  for (const auto& h : o.ps_hosts)
    c.add_ps_hosts(h);
  c.set_ps_sharding(a.ps_sharding);
  c.set_fidelity(a.fidelity);
  return c;
}

} // namespace ddlsim::cli
