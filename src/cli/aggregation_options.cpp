// Command-line options of the aggregation algorithms, shared by `ddlsim run` and `ddlsim collective`.
#include "cli/aggregation_options.hpp"

#include "cli/options.hpp"
#include "collectives/algorithm_table.hpp"
#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "stack/stack_io.hpp"

namespace po = boost::program_options;

namespace ddlsim::cli {

namespace {

/** Most chunks per collective: no source; reasoning: 65536 chunks of a 1 MiB tensor are 16 B messages, already far
 *  below any library's chunk (NCCL's smallest is its LL protocol's 8 B line, but it pipelines 256 KiB chunks). */
constexpr long long kMaxChunks = 65536;

const NameTable<collectives::PsSharding> kShardingNames = {{collectives::PsSharding::Split, "split"},
                                                           {collectives::PsSharding::RoundRobin, "round-robin"}};
const NameTable<collectives::PsUpdate> kPsUpdateNames = {{collectives::PsUpdate::Worker, "worker"},
                                                         {collectives::PsUpdate::Server, "server"}};
const NameTable<collectives::Optimizer> kOptimizerNames = {{collectives::Optimizer::Sgd, "sgd"},
                                                           {collectives::Optimizer::Momentum, "momentum"},
                                                           {collectives::Optimizer::Adam, "adam"}};
const NameTable<collectives::Fidelity> kFidelityNames = {{collectives::Fidelity::Auto, "auto"},
                                                         {collectives::Fidelity::Message, "message"},
                                                         {collectives::Fidelity::Flow, "flow"},
                                                         {collectives::Fidelity::Steps, "steps"}};

/** The fields the user set to something other than their default. */
std::vector<std::string> given_fields(const AggregationCli& a)
{
  const AggregationCli d;
  std::vector<std::string> given;
  auto note = [&given](bool set, const char* name) {
    if (set)
      given.emplace_back(name);
  };
  note(a.servers != d.servers, "ps_servers");
  note(!a.ps_hosts.empty(), "ps_hosts");
  note(a.ps_sharding != d.ps_sharding, "ps_sharding");
  note(a.ps_update != d.ps_update, "ps_update");
  note(a.optimizer != d.optimizer, "optimizer");
  note(a.inter_algorithm != d.inter_algorithm, "inter_algorithm");
  note(a.chunk != d.chunk, "chunk_bytes");
  note(a.chunks != d.chunks, "chunks");
  note(a.fidelity != d.fidelity, "fidelity");
  return given;
}

collectives::AlgorithmId parse_inter_algorithm(const std::string& name)
{
  const auto* e = collectives::find_algorithm(name);
  if (e == nullptr || !collectives::inter_algorithm_allowed(e->id))
    throw ConfigError("--inter-algorithm must be a flat algorithm or ps: " + collectives::flat_algorithms() +
                      " (got '" + name + "')");
  return e->id;
}

/** "tree, dbtree (0: 1 MiB), nccl-tree, nccl (0: 256 KiB)": the chunk defaults from the table. */
std::string chunk_help()
{
  std::string pipelined;
  std::uint64_t chunk = 0;
  for (const auto& e : collectives::algorithm_table())
    if ((e.knobs & collectives::kKnobChunk) && e.default_chunk_bytes > 0) {
      if (chunk != 0 && e.default_chunk_bytes != chunk)
        pipelined += " (0: " + format_bytes(double(chunk)) + ")";
      pipelined += (pipelined.empty() ? "" : ", ") + std::string(e.name);
      chunk = e.default_chunk_bytes;
    }
  return pipelined + " (0: " + format_bytes(double(chunk)) +
         "): pipelining chunk; ring: largest message, the vector is reduced in slices of P x SIZE one after the "
         "other, as NCCL does (0: one slice)";
}

/** "ring, hd: message (every transfer) | flow (...) | auto (ring: ..., hd: message)": the flow forms of the table. */
std::string fidelity_help()
{
  std::vector<std::string> with_flow, automatic;
  for (const auto& e : collectives::algorithm_table()) {
    if (e.flow == collectives::FlowForm::None)
      continue;
    with_flow.emplace_back(e.name);
    automatic.push_back(
        std::string(e.name) + ": " +
        (e.flow == collectives::FlowForm::Auto
             ? "message up to " + std::to_string(collectives::kFlowAboveRanks) + " ranks, flow above"
         : e.flow == collectives::FlowForm::WhenExact
             ? "message up to " + std::to_string(collectives::kFlowAboveRanks) +
                   " ranks, flow above where it equals the message level (" +
                   (e.id == collectives::AlgorithmId::Rd
                        ? "a power of two, every step's transfers alike, or one stream and "
                          "nodes alike; among hier's node leaders with several streams, nodes "
                          "that XOR maps onto each other"
                    : e.id == collectives::AlgorithmId::Dbtree || e.id == collectives::AlgorithmId::NcclTree
                        ? "one in-order stream: every aggregation in one network; the priority policy: every link "
                          "crossed by one rank's transfers only"
                        : "one in-order stream: every aggregation in one network; the priority policy: no link "
                          "shared by tree edges without a common rank") +
                   ")"
             : std::string("message")));
  }
  return join(with_flow) +
         ": message (every transfer) | flow (one flow per rank and phase; the pipelined trees: their recurrence at "
         "max-min rates, docs/collectives.md) | auto (" +
         join(automatic, "; ") +
         ") | steps (ring, rd, hd: every transfer, every rank's step s together after every rank's step s-1; rd's and "
         "hd's flow forms)";
}

} // namespace

po::options_description aggregation_options(AggregationCli& a)
{
  po::options_description d("Aggregation", kHelpColumns, kHelpDescriptionColumns);
  auto add_d = d.add_options();
  const std::string default_algorithm = collectives::entry(collectives::kDefaultAlgorithm).name;
  add_d("algorithm", po::value(&a.algorithm)->value_name("NAME"),
        ("allreduce algorithm: " + collectives::known_algorithms() + " (default: the stack's own selection, " +
         default_algorithm + " for stacks without one)")
            .c_str());
  add_d("stack", po::value(&a.stack)->default_value(a.stack)->value_name("NAME|FILE"),
        ("communication stack profile (docs/stacks.md): " + join(stack::shipped_stacks()) +
         ", or a .textproto file; ideal is the exact alpha-beta model")
            .c_str());
  add_d("msg-overhead", po::value(&a.msg_overhead)->default_value(a.msg_overhead)->value_name("TIME"),
        "software overhead added before every message (e.g. 32us), to model an MPI or gRPC stack");
  add_d("reduce-cost", po::value(&a.reduce_cost)->default_value(a.reduce_cost)->value_name("TIME"),
        "reduction time per byte on the reducing host (e.g. 1.5ns)");
  add_d("chunk-bytes", po::value(&a.chunk)->default_value(a.chunk)->value_name("SIZE"), chunk_help().c_str());
  add_d("chunks", po::value(&a.chunks)->default_value(a.chunks)->value_name("N"),
        "chunks per collective, 1 to 65536 (excludes --chunk-bytes; 0: none): ring: N slices, each a whole ring "
        "allreduce of about M/N, one after the other; tree, dbtree, nccl-tree, nccl: pipelined in chunks of "
        "ceil(M/N) bytes (each tree of dbtree and nccl-tree: of its half)");
  add_d("inter-algorithm", po::value(&a.inter_algorithm)->default_value(a.inter_algorithm)->value_name("NAME"),
        ("hier: algorithm among node leaders (" + collectives::flat_algorithms() +
         ", or ps: leaders push to and pull from parameter servers)")
            .c_str());
  add_d("servers", po::value(&a.servers)->default_value(a.servers)->value_name("S"), "ps: number of parameter servers");
  add_d("ps-hosts", po::value(&a.ps_hosts)->value_name("H0,H1,..."),
        "ps: hosts of the servers (dedicated or CPU hosts); default: co-located with ranks 0..S-1");
  add_d("ps-sharding", po::value(&a.ps_sharding)->default_value(a.ps_sharding)->value_name("NAME"),
        "ps: split (each tensor in S byte ranges) | round-robin (tensor k on server k mod S)");
  add_d("ps-update", po::value(&a.ps_update)->default_value(a.ps_update)->value_name("WHERE"),
        "ps: worker (servers only sum, every worker updates) | server (servers sum and run the update on their "
        "host, bounded by its memory bandwidth; workers pull the parameters and run no update)");
  add_d("optimizer", po::value(&a.optimizer)->default_value(a.optimizer)->value_name("NAME"),
        "ps with --ps-update server: the update the servers run, sgd | momentum | adam (docs/frameworks.md)");
  add_d("fidelity", po::value(&a.fidelity)->default_value(a.fidelity)->value_name("NAME"), fidelity_help().c_str());
  return d;
}

Aggregation resolve(const AggregationCli& a)
{
  Aggregation r;
  collectives::CollectiveOptions& o = r.options;
  o.msg_overhead_s = parse_seconds(a.msg_overhead, "--msg-overhead");
  o.reduce_s_per_byte = parse_seconds(a.reduce_cost, "--reduce-cost");
  o.chunk_bytes = parse_bytes(a.chunk, "--chunk-bytes");
  if (o.chunk_bytes != 0 && (o.chunk_bytes < (1ULL << 10) || o.chunk_bytes > (1ULL << 30)))
    throw ConfigError("--chunk-bytes must be 0 (the algorithm's default) or between 1KiB and 1GiB (got '" + a.chunk +
                      "')");
  if (a.chunks < 0 || a.chunks > kMaxChunks)
    throw ConfigError("--chunks must be 0 (none) or between 1 and " + std::to_string(kMaxChunks) + " (got " +
                      std::to_string(a.chunks) + ")");
  o.chunks = static_cast<std::uint32_t>(a.chunks);
  o.inter_algorithm = parse_inter_algorithm(a.inter_algorithm);
  o.ps_servers = a.servers;
  o.ps_hosts = parse_host_list(a.ps_hosts, "--ps-hosts");
  o.ps_sharding = parse_name(kShardingNames, a.ps_sharding, "--ps-sharding");
  o.ps_update = parse_name(kPsUpdateNames, a.ps_update, "--ps-update");
  o.optimizer = parse_name(kOptimizerNames, a.optimizer, "--optimizer");
  o.fidelity = parse_name(kFidelityNames, a.fidelity, "--fidelity");
  stack::Stack st = stack::load_stack(a.stack); // InputError (exit 1) for a bad profile
  o.stack = st.profile;
  if (!a.algorithm.empty())
    r.algorithm = collectives::parse_algorithm(a.algorithm);
  else if (st.algorithm)
    r.algorithm = *st.algorithm;
  else
    r.algorithm = collectives::parse_algorithm(collectives::entry(collectives::kDefaultAlgorithm).name);
  collectives::check_options(r.algorithm, o, given_fields(a));
  return r;
}

proto::AggregationConfig to_proto(const Aggregation& a)
{
  const auto& o = a.options;
  proto::AggregationConfig c;
  c.set_msg_overhead_s(o.msg_overhead_s);
  c.set_reduce_s_per_byte(o.reduce_s_per_byte);
  c.set_chunk_bytes(o.chunk_bytes);
  c.set_chunks(o.chunks);
  c.set_inter_algorithm(collectives::entry(o.inter_algorithm).name);
  c.set_ps_servers(static_cast<unsigned>(o.ps_servers));
  for (const auto& h : o.ps_hosts)
    c.add_ps_hosts(h);
  c.set_ps_sharding(name_of(kShardingNames, o.ps_sharding));
  c.set_fidelity(name_of(kFidelityNames, o.fidelity));
  c.set_ps_update(name_of(kPsUpdateNames, o.ps_update));
  c.set_optimizer(name_of(kOptimizerNames, o.optimizer));
  c.set_stack(o.stack.name);
  c.set_stack_file(o.stack.source);
  return c;
}

} // namespace ddlsim::cli
