// Unit tests: Chakra execution traces in and out (workload/chakra.hpp): exact round trips, the layout of Chakra's
// text converter, and every rejection rule with file and node.
#include "common/error.hpp"
#include "proto/chakra_et.pb.h"
#include "workload/chakra.hpp"
#include "workload/workload.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
namespace cp = ChakraProtoMsg;

namespace {

workload::ImportMetadata meta()
{
  workload::ImportMetadata m;
  m.model = "toy";
  m.reference_gpu = "P40";
  m.batch = 16;
  return m;
}

void frame(std::string& out, const google::protobuf::Message& m)
{
  const std::string bytes = m.SerializeAsString();
  for (std::uint64_t v = bytes.size();; v >>= 7) {
    if (v < 0x80) {
      out += static_cast<char>(v);
      break;
    }
    out += static_cast<char>(0x80 | (v & 0x7f));
  }
  out += bytes;
}

std::string metadata()
{
  cp::GlobalMetadata g;
  auto* a = g.add_attr();
  a->set_name("schema");
  a->set_string_val("test");
  std::string out;
  frame(out, g);
  return out;
}

std::string file_of(const std::vector<cp::Node>& nodes)
{
  std::string out = metadata();
  for (const auto& n : nodes)
    frame(out, n);
  return out;
}

cp::Node comp(std::uint64_t id, const std::string& name, std::uint64_t us, std::vector<std::uint64_t> deps = {})
{
  cp::Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(cp::COMP_NODE);
  n.set_duration_micros(us);
  for (auto d : deps)
    n.add_data_deps(d);
  return n;
}

cp::Node coll(std::uint64_t id, const std::string& name, std::int64_t bytes, std::vector<std::uint64_t> deps,
              std::int64_t type = cp::ALL_REDUCE)
{
  cp::Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(cp::COMM_COLL_NODE);
  for (auto d : deps)
    n.add_data_deps(d);
  auto* t = n.add_attr();
  t->set_name("comm_type");
  t->set_int64_val(type);
  auto* s = n.add_attr();
  s->set_name("comm_size");
  s->set_int64_val(bytes);
  return n;
}

workload::ChakraImport import(const std::vector<cp::Node>& nodes, const std::string& name = "t.0.et")
{
  return workload::import_chakra({{name, file_of(nodes)}}, meta());
}

/** conv1 -> fc: forward 10, 20 us; backward 30, 40 us; fc all-reduces 4096 bytes, conv1 1024. */
std::vector<cp::Node> two_layers()
{
  return {comp(0, "COMP_NODE_conv1_FWD", 10),         comp(1, "COMP_NODE_fc_FWD", 20, {0}),
          comp(2, "COMP_NODE_fc_BWD_WG", 40, {1}),    coll(3, "COMM_COLL_NODE_fc_ALLREDUCE", 4096, {2}),
          comp(4, "COMP_NODE_conv1_BWD_WG", 30, {2}), coll(5, "COMM_COLL_NODE_conv1_ALLREDUCE", 1024, {4})};
}

proto::Workload toy()
{
  proto::Workload w;
  w.set_schema_version(workload::kSchemaVersion);
  w.set_model("toy");
  w.set_reference_gpu("P40");
  w.set_batch_size_per_gpu(16);
  const struct {
    const char* name;
    double f, b;
    std::int64_t bytes;
  } layers[] = {{"conv1", 0.001234, 0.002468, 37632}, {"relu", 0.000017, 0.000001, 0}, {"fc", 0.5, 0.25, 8196000}};
  for (const auto& l : layers) {
    auto* x = w.add_layers();
    x->set_name(l.name);
    x->set_forward_s(l.f);
    x->set_backward_s(l.b);
    x->set_gradient_bytes(l.bytes);
  }
  return w;
}

template <class Message>
void require_error(const std::vector<cp::Node>& nodes, const Message& message)
{
  REQUIRE_THROWS_WITH(workload::import_chakra({{"t.0.et", file_of(nodes)}}, meta()), message);
}

/** The nodes of an exported trace, read back with the generated classes (not with the importer). */
std::vector<cp::Node> nodes_of(const std::string& bytes)
{
  std::vector<cp::Node> out;
  std::size_t pos = 0;
  bool first = true;
  while (pos < bytes.size()) {
    std::uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<unsigned char>(bytes[pos++]);
      len |= std::uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80))
        break;
    }
    if (first) {
      cp::GlobalMetadata g;
      REQUIRE(len > 0); // Chakra's reader stops at a zero length
      REQUIRE(g.ParseFromArray(bytes.data() + pos, static_cast<int>(len)));
      first = false;
    } else {
      cp::Node n;
      REQUIRE(n.ParseFromArray(bytes.data() + pos, static_cast<int>(len)));
      out.push_back(n);
    }
    pos += len;
  }
  return out;
}

} // namespace

TEST_CASE("chakra: two layers read as forward, backward and the all-reduce bytes of their backward node")
{
  const auto imported = import(two_layers());
  const proto::Workload& w = imported.workload;
  REQUIRE(w.layers_size() == 2);
  CHECK(w.layers(0).name() == "conv1");
  CHECK(w.layers(0).forward_s() == 10e-6);
  CHECK(w.layers(0).backward_s() == 30e-6);
  CHECK(w.layers(0).gradient_bytes() == 1024);
  CHECK(w.layers(1).name() == "fc");
  CHECK(w.layers(1).forward_s() == 20e-6);
  CHECK(w.layers(1).backward_s() == 40e-6);
  CHECK(w.layers(1).gradient_bytes() == 4096);
  CHECK(imported.notes.empty());
}

TEST_CASE("chakra: the layers follow the dependency order of the forward nodes, not the file order")
{
  // fc's forward comes first in the file but depends on conv1's
  const auto w = import({comp(1, "COMP_NODE_fc_FWD", 20, {0}), comp(0, "COMP_NODE_conv1_FWD", 10)}).workload;
  REQUIRE(w.layers_size() == 2);
  CHECK(w.layers(0).name() == "conv1");
  CHECK(w.layers(1).name() == "fc");
}

TEST_CASE("chakra: export then import gives back the same layers and bytes exactly")
{
  const proto::Workload w = toy();
  const auto e = workload::export_chakra(w);
  CHECK(e.rounded == 0);
  const auto back = workload::import_chakra({{"x.0.et", e.bytes}}, meta()).workload;
  REQUIRE(back.layers_size() == w.layers_size());
  for (int i = 0; i < w.layers_size(); ++i) {
    CHECK(back.layers(i).name() == w.layers(i).name());
    CHECK(back.layers(i).forward_s() == w.layers(i).forward_s());
    CHECK(back.layers(i).backward_s() == w.layers(i).backward_s());
    CHECK(back.layers(i).gradient_bytes() == w.layers(i).gradient_bytes());
  }
}

TEST_CASE("chakra: the exported trace has the nodes, names, dependencies and attributes documented")
{
  const auto nodes = nodes_of(workload::export_chakra(toy()).bytes);
  // 3 forward, 3 backward, 2 all-reduces (relu has no gradient bytes)
  REQUIRE(nodes.size() == 8);
  const char* const names[] = {"COMP_NODE_conv1_FWD",
                               "COMP_NODE_relu_FWD",
                               "COMP_NODE_fc_FWD",
                               "COMP_NODE_fc_BWD_WG",
                               "COMM_COLL_NODE_fc_ALLREDUCE",
                               "COMP_NODE_relu_BWD_WG",
                               "COMP_NODE_conv1_BWD_WG",
                               "COMM_COLL_NODE_conv1_ALLREDUCE"};
  const std::uint64_t deps[] = {~0ull, 0, 1, 2, 3, 3, 5, 6};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    CHECK(nodes[i].id() == i);
    CHECK(nodes[i].name() == names[i]);
    if (deps[i] == ~0ull)
      CHECK(nodes[i].data_deps_size() == 0);
    else
      CHECK((nodes[i].data_deps_size() == 1 && nodes[i].data_deps(0) == deps[i]));
  }
  CHECK(nodes[0].duration_micros() == 1234);
  CHECK(nodes[3].duration_micros() == 250000);
  CHECK(nodes[4].type() == cp::COMM_COLL_NODE);
  REQUIRE(nodes[4].attr_size() == 2);
  CHECK(nodes[4].attr(0).name() == "comm_type");
  CHECK(nodes[4].attr(0).int64_val() == cp::ALL_REDUCE);
  CHECK(nodes[4].attr(1).name() == "comm_size");
  CHECK(nodes[4].attr(1).int64_val() == 8196000);
}

TEST_CASE("chakra: export rounds durations to whole microseconds and says by how much")
{
  proto::Workload w = toy();
  w.mutable_layers(0)->set_forward_s(1234.4e-6); // 1234 us after rounding: 0.4 us less
  const auto e = workload::export_chakra(w);
  CHECK(e.rounded == 1);
  CHECK(e.max_change_s == Approx(0.4e-6).margin(1e-15));
  CHECK(nodes_of(e.bytes)[0].duration_micros() == 1234);
}

TEST_CASE("chakra: the layout of Chakra's text converter (data parallel, 2 passes) reads as one iteration")
{
  // convert_data_parallel (mlcommons/chakra src/converter/text_converter.py): per pass the forward nodes, then
  // from the last layer BWD_WG, its all-reduce, BWD_IG (none for the first layer); an ASTRA-sim "NONE"
  // communication becomes comm_type 0 with comm_size 0; a pass's forward depends on the last pass's all-reduce.
  std::vector<cp::Node> nodes;
  std::uint64_t id = 0;
  std::uint64_t comm[2] = {0, 0}, fwd[2] = {0, 0}, ig = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (int l = 0; l < 2; ++l) {
      std::vector<std::uint64_t> deps;
      if (l == 1)
        deps.push_back(fwd[0]);
      if (pass == 1)
        deps.push_back(comm[l]);
      nodes.push_back(comp(id, l == 0 ? "COMP_NODE_a_FWD" : "COMP_NODE_b_FWD", l == 0 ? 5 : 7, deps));
      fwd[l] = id++;
    }
    // layer b (last) first
    nodes.push_back(comp(id, "COMP_NODE_b_BWD_WG", 11, {fwd[1]}));
    const std::uint64_t wg_b = id++;
    nodes.push_back(coll(id, "COMM_COLL_NODE_b_ALLREDUCE", 2048, {wg_b}));
    comm[1] = id++;
    nodes.push_back(comp(id, "COMP_NODE_b_BWD_IG", 13, {wg_b}));
    ig = id++;
    nodes.push_back(comp(id, "COMP_NODE_a_BWD_WG", 17, {ig}));
    const std::uint64_t wg_a = id++;
    nodes.push_back(coll(id, "COMM_COLL_NODE_a_NONE", 0, {wg_a}));
    comm[0] = id++;
  }
  const auto imported = import(nodes, "dp.0.et");
  const auto& w = imported.workload;
  REQUIRE(w.layers_size() == 2);
  CHECK(w.layers(0).name() == "a");
  CHECK(w.layers(0).forward_s() == 5e-6);
  CHECK(w.layers(0).backward_s() == 17e-6);
  CHECK(w.layers(0).gradient_bytes() == 0);
  CHECK(w.layers(1).forward_s() == 7e-6);
  CHECK(w.layers(1).backward_s() == 24e-6); // BWD_WG 11 + BWD_IG 13
  CHECK(w.layers(1).gradient_bytes() == 2048);
  REQUIRE(imported.notes.size() == 1);
  CHECK(imported.notes[0] == "dp.0.et: 2 passes of the same iteration; read one");

  nodes[7].set_duration_micros(6); // pass 2's forward of a
  require_error(nodes, "t.0.et: node 7 ('COMP_NODE_a_FWD'): pass 2 of layer 'a' differs from pass 1 (forward 6 vs "
                       "5 us, backward 17 vs 17 us, all-reduce 0 vs 0 bytes): ddlsim reads one iteration, which "
                       "passes must repeat");
}

TEST_CASE("chakra: several ranks must agree on layers and bytes, times are rank 0's")
{
  auto slower = two_layers();
  slower[0].set_duration_micros(13);
  const std::string fast = file_of(two_layers()), slow = file_of(slower);
  // rank 0 is the file named .0.et, whatever the order given
  const auto imported = workload::import_chakra({{"t.1.et", slow}, {"t.0.et", fast}}, meta());
  CHECK(imported.workload.layers(0).forward_s() == 10e-6);
  REQUIRE(imported.notes.size() == 1);
  CHECK(imported.notes[0] == "2 ranks with the same layers and gradient bytes; times differ by up to 3 us (t.1.et, "
                             "layer 'conv1'): the workload has t.0.et's");
  const auto same = workload::import_chakra({{"t.0.et", fast}, {"t.1.et", fast}}, meta());
  CHECK(same.notes[0] == "2 ranks with the same layers and gradient bytes; the same times too");

  auto other_bytes = two_layers();
  other_bytes[3] = coll(3, "COMM_COLL_NODE_fc_ALLREDUCE", 4095, {2});
  REQUIRE_THROWS_WITH(workload::import_chakra({{"t.0.et", fast}, {"t.1.et", file_of(other_bytes)}}, meta()),
                      "t.1.et: node 1 ('COMP_NODE_fc_FWD'): layer 'fc' all-reduces 4095 bytes, in t.0.et 4096 "
                      "(data-parallel ranks all-reduce the same gradients)");
  std::vector<cp::Node> one = {comp(0, "COMP_NODE_conv1_FWD", 10)};
  REQUIRE_THROWS_WITH(workload::import_chakra({{"t.0.et", fast}, {"t.1.et", file_of(one)}}, meta()),
                      "t.1.et: 1 layers, but t.0.et has 2 (data-parallel ranks run the same layers)");
  std::vector<cp::Node> renamed = two_layers();
  renamed[0].set_name("COMP_NODE_conv0_FWD");
  renamed[4].set_name("COMP_NODE_conv0_BWD_WG");
  REQUIRE_THROWS_WITH(workload::import_chakra({{"t.0.et", fast}, {"t.1.et", file_of(renamed)}}, meta()),
                      "t.1.et: node 0 ('COMP_NODE_conv0_FWD'): layer 1 is 'conv0', in t.0.et 'conv1' (data-parallel "
                      "ranks run the same layers)");
  REQUIRE_THROWS_WITH(workload::import_chakra({{"a/t.0.et", fast}, {"b/t.0.et", fast}}, meta()),
                      "b/t.0.et: rank 0 again (also a/t.0.et)");
}

TEST_CASE("chakra: framing errors name the file and the byte")
{
  const std::string good = file_of(two_layers());
  REQUIRE_THROWS_WITH(workload::import_chakra({{"e.et", ""}}, meta()),
                      "e.et: empty file (expected a Chakra execution trace: GlobalMetadata, then nodes)");
  REQUIRE_THROWS_WITH(workload::import_chakra({{"z.et", std::string("\x1f\x8b\x08\x00", 4)}}, meta()),
                      "z.et: gzip-compressed: decompress it first (gunzip)");
  const std::size_t meta_size = metadata().size();
  REQUIRE_THROWS_WITH(workload::import_chakra({{"v.et", metadata() + "\x85"}}, meta()),
                      "v.et: byte " + std::to_string(meta_size) +
                          ": the length of the first node is cut off by the end of the file (truncated varint)");
  REQUIRE_THROWS_WITH(workload::import_chakra({{"v.et", metadata() + std::string(11, '\xff')}}, meta()),
                      "v.et: byte " + std::to_string(meta_size) +
                          ": the length of the first node is not a varint (more than 10 bytes)");
  REQUIRE_THROWS_WITH(workload::import_chakra({{"c.et", good.substr(0, good.size() - 1)}}, meta()),
                      Catch::Matchers::Contains("the node after node 4 of ") &&
                          Catch::Matchers::EndsWith(" remain (truncated file)"));
  REQUIRE_THROWS_WITH(workload::import_chakra({{"g.et", metadata() + std::string("\x02\x0f\x00", 3)}}, meta()),
                      "g.et: byte " + std::to_string(meta_size) + ": the first node is not a Chakra Node message");
  REQUIRE_THROWS_WITH(workload::import_chakra({{"m.et", std::string("\x02\x0f\x00", 3)}}, meta()),
                      "m.et: byte 0: not a Chakra GlobalMetadata message");
  REQUIRE_THROWS_WITH(workload::import_chakra({{"n.et", metadata()}}, meta()),
                      "n.et: no forward compute node (COMP_NODE_<layer>_FWD)");
}

TEST_CASE("chakra: node types other than compute and all-reduce are refused")
{
  auto nodes = two_layers();
  nodes[3].set_type(cp::COMM_SEND_NODE);
  require_error(nodes, "t.0.et: node 3 ('COMM_COLL_NODE_fc_ALLREDUCE'): node type COMM_SEND_NODE is not supported "
                       "(ddlsim reads the compute and all-reduce nodes of a data-parallel trace: COMP_NODE, "
                       "COMM_COLL_NODE)");
  nodes[3].set_type(cp::MEM_LOAD_NODE);
  require_error(nodes, "t.0.et: node 3 ('COMM_COLL_NODE_fc_ALLREDUCE'): node type MEM_LOAD_NODE is not supported "
                       "(ddlsim reads the compute and all-reduce nodes of a data-parallel trace: COMP_NODE, "
                       "COMM_COLL_NODE)");
  nodes[3].set_type(static_cast<cp::NodeType>(42));
  require_error(nodes, "t.0.et: node 3 ('COMM_COLL_NODE_fc_ALLREDUCE'): node type unknown (42) is not supported "
                       "(ddlsim reads the compute and all-reduce nodes of a data-parallel trace: COMP_NODE, "
                       "COMM_COLL_NODE)");
}

TEST_CASE("chakra: collectives other than all-reduce, and all-reduces without type or size, are refused")
{
  auto nodes = two_layers();
  nodes[3] = coll(3, "COMM_COLL_NODE_fc_ALLGATHER", 4096, {2}, cp::ALL_GATHER);
  require_error(nodes, "t.0.et: node 3 ('COMM_COLL_NODE_fc_ALLGATHER'): collective ALL_GATHER is not supported "
                       "(ddlsim reads data-parallel traces: ALL_REDUCE only)");
  nodes[3] = coll(3, "x", 4096, {2}, 99);
  require_error(nodes, "t.0.et: node 3 ('x'): collective unknown (99) is not supported (ddlsim reads data-parallel "
                       "traces: ALL_REDUCE only)");
  nodes[3] = coll(3, "x", -1, {2});
  require_error(nodes, "t.0.et: node 3 ('x'): comm_size must be >= 0 (got -1)");
  nodes[3] = coll(3, "x", 4096, {2});
  nodes[3].mutable_attr()->DeleteSubrange(1, 1);
  require_error(nodes, "t.0.et: node 3 ('x'): an all-reduce without a comm_size attribute");
  nodes[3].mutable_attr()->DeleteSubrange(0, 1);
  require_error(nodes, "t.0.et: node 3 ('x'): a collective without a comm_type attribute");
  nodes[3] = coll(3, "x", 4096, {2});
  nodes[3].mutable_attr(0)->set_string_val("ALL_REDUCE");
  require_error(nodes, "t.0.et: node 3 ('x'): attribute comm_type is not an integer");
}

TEST_CASE("chakra: an all-reduce belongs to exactly one backward node, and a layer has one per pass")
{
  auto nodes = two_layers();
  nodes[3].set_data_deps(0, 1); // fc's forward
  require_error(nodes, "t.0.et: node 3 ('COMM_COLL_NODE_fc_ALLREDUCE'): an all-reduce must depend on exactly one "
                       "backward compute node, whose layer its bytes belong to (it depends on 0)");
  nodes = two_layers();
  nodes[5].add_data_deps(2);
  require_error(nodes, "t.0.et: node 5 ('COMM_COLL_NODE_conv1_ALLREDUCE'): an all-reduce must depend on exactly one "
                       "backward compute node, whose layer its bytes belong to (it depends on 2)");
  nodes = two_layers();
  nodes.push_back(coll(6, "again", 1, {2}));
  require_error(nodes, "t.0.et: node 6 ('again'): a second all-reduce for layer 'fc' (the first is node 3)");
}

TEST_CASE("chakra: dependencies must exist and have no cycle, ids are unique")
{
  auto nodes = two_layers();
  nodes[4].add_ctrl_deps(77);
  require_error(nodes, "t.0.et: node 4 ('COMP_NODE_conv1_BWD_WG'): depends on node 77, which the file lacks");
  nodes = two_layers();
  nodes[0].add_ctrl_deps(2); // conv1 FWD after fc BWD_WG, which waits for conv1 FWD through fc FWD
  require_error(nodes, Catch::Matchers::StartsWith("t.0.et: node ") &&
                           Catch::Matchers::EndsWith("): is on a dependency cycle"));
  nodes = {comp(0, "COMP_NODE_a_FWD", 1, {0})};
  require_error(nodes, "t.0.et: node 0 ('COMP_NODE_a_FWD'): is on a dependency cycle");
  nodes = two_layers();
  nodes[5].set_id(4);
  require_error(nodes, Catch::Matchers::StartsWith("t.0.et: node 4 ('COMM_COLL_NODE_conv1_ALLREDUCE'): a second node "
                                                   "with id 4 (the first is at byte "));
}

TEST_CASE("chakra: compute nodes need the per-layer names, backward needs a forward of its layer")
{
  auto nodes = two_layers();
  nodes[1].set_name("aten::mm");
  require_error(nodes, "t.0.et: node 1 ('aten::mm'): a compute node's name must be COMP_NODE_<layer>_FWD, _BWD_WG "
                       "or _BWD_IG (ddlsim reads per-layer data-parallel traces, named as Chakra's text converter "
                       "names them)");
  nodes[1].set_name("COMP_NODE__FWD"); // no layer between prefix and suffix
  require_error(nodes, Catch::Matchers::StartsWith("t.0.et: node 1 ('COMP_NODE__FWD'): a compute node's name must"));
  nodes = two_layers();
  nodes[4].set_name("COMP_NODE_conv2_BWD_WG");
  require_error(nodes, "t.0.et: node 4 ('COMP_NODE_conv2_BWD_WG'): backward of layer 'conv2', which has no forward "
                       "node (COMP_NODE_conv2_FWD)");
  nodes = two_layers();
  nodes.push_back(comp(6, "COMP_NODE_fc_BWD_WG", 40, {4}));
  require_error(nodes, "t.0.et: node 6 ('COMP_NODE_fc_BWD_WG'): more BWD_WG nodes than forward nodes for layer 'fc' "
                       "(1)");
  nodes = two_layers();
  nodes.push_back(comp(6, "COMP_NODE_fc_FWD", 20, {5}));
  require_error(nodes, "t.0.et: node 6 ('COMP_NODE_fc_FWD'): layer 'fc' has 2 forward nodes, layer 'conv1' 1 (each "
                       "pass must hold every layer)");
  nodes = two_layers();
  nodes[1].set_name("COMP_NODE_\xff_FWD");
  require_error(nodes, "t.0.et: node 1: its name is not valid UTF-8");
  nodes[1].set_name("COMP_NODE_a\nb_FWD");
  require_error(nodes, "t.0.et: node 1: its name has a control character");
}
