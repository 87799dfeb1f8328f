// Unit tests of the stack profile loader: every shipped profile loads, ideal is the exact model, every guard.
#include "common/error.hpp"
#include "stack/stack_io.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

namespace {
std::string error_of(const std::string& text)
{
  try {
    stack::parse_stack(text, "p.textproto");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("every shipped stack profile loads, ideal (file or built in) is the exact model")
{
  for (const auto& name : stack::shipped_stacks())
    CHECK_NOTHROW(stack::load_stack(name));
  CHECK(stack::load_stack("ideal").profile.ideal());
  CHECK(stack::load_stack(stack::stacks_dir() + "/ideal.textproto").profile.ideal());
  CHECK_FALSE(stack::load_stack("openmpi-tcp").profile.ideal());
  CHECK(stack::load_stack("openmpi-tcp").algorithm->for_size(9999, 4) == collectives::AlgorithmId::Rd);
  CHECK(stack::load_stack("openmpi-tcp").algorithm->for_size(10000, 4) == collectives::AlgorithmId::Ring);
}

TEST_CASE("stack profile guards name the file, the field and the value")
{
  const std::string head = "schema_version: 1 name: \"x\" ";
  CHECK(error_of("name: \"x\"") == "p.textproto: schema_version must be 1 (got 0)");
  CHECK(error_of("schema_version: 1") == "p.textproto: name is missing");
  CHECK(error_of(head + "recv_overhead_s: 2") ==
        "p.textproto: recv_overhead_s must be a finite number of seconds in [0, 1) (got 2)");
  CHECK(error_of(head + "call_copy_s_per_byte: -1") ==
        "p.textproto: call_copy_s_per_byte must be a finite number of seconds in [0, 1) (got -1)");
  CHECK(error_of(head + "latency_factor { above_bytes: 5 value: 2 } latency_factor { above_bytes: 5 value: 3 }") ==
        "p.textproto: latency_factor[1].above_bytes must increase (got 5 after 5)");
  CHECK(error_of(head + "bandwidth_factor { value: 0 }") ==
        "p.textproto: bandwidth_factor[0].value must be a finite factor > 0 (got 0)");
  CHECK(error_of(head + "algorithm { max_ranks: 4 algorithm: \"rd\" }") ==
        "p.textproto: algorithm rule 1: max_ranks must be > 0, and 0 (any) only in the last rule (got 4)");
  CHECK(error_of(head + "algorithm { max_ranks: 8 algorithm: \"rd\" } algorithm { max_ranks: 4 algorithm: \"hd\" } "
                        "algorithm { algorithm: \"ring\" }") ==
        "p.textproto: algorithm rule 2: max_ranks must increase (got 4 after 8)");
  CHECK(error_of(head + "algorithm { algorithm: \"hier\" }") ==
        "p.textproto: algorithm rule 1: 'hier': a stack's rules choose between flat algorithms (ring, rd, hd, tree, "
        "dbtree) or NCCL's (nccl, nccl-ring, nccl-tree)");
  CHECK(error_of(head + "algorithm { max_ranks: 99999999 algorithm: \"rd\" }") ==
        "p.textproto: algorithm[0].max_ranks must be <= 16777216 (got 99999999)");
  CHECK(error_of("bogus: 1").rfind("p.textproto: line 1, column 6:", 0) == 0);
}

TEST_CASE("host staging: the PCIe part of the copy is at most the copy, and only for a host-staged stack")
{
  const std::string head = "schema_version: 1 name: \"x\" ";
  CHECK(error_of(head + "host_staged: true copy_s_per_byte: 1e-9 pcie_copy_s_per_byte: 2e-9") ==
        "p.textproto: pcie_copy_s_per_byte must be <= copy_s_per_byte (got 2e-09 > 1e-09)");
  CHECK(error_of(head + "copy_s_per_byte: 1e-9 pcie_copy_s_per_byte: 1e-9") ==
        "p.textproto: pcie_copy_s_per_byte must be 0 without host_staged (got 1e-09)");
  CHECK(error_of(head + "host_staged: true copy_s_per_byte: 1e-9 pcie_copy_s_per_byte: -1") ==
        "p.textproto: pcie_copy_s_per_byte must be a finite number of seconds in [0, 1) (got -1)");
  const auto grpc = stack::load_stack("grpc-tcp").profile;
  CHECK(grpc.host_staged);
  CHECK(grpc.pcie_copy_s_per_byte == 0.4e-9);
  CHECK_FALSE(stack::load_stack("nccl").profile.host_staged);
  CHECK(stack::load_stack("mpi-verbs").profile.host_staged);
}

TEST_CASE("a stack makes senders post apart only where each message costs its sender time")
{
  // CommWorld::send_cost_s: a send overhead, a copy per byte, a rendezvous round trip. A receive overhead, a per-call
  // cost or size factors leave a sender's messages together (ParameterServer::posts_apart, Hierarchical::posts_apart).
  const std::string head = "schema_version: 1 name: \"x\" ";
  auto sends_cost = [&](const std::string& fields) {
    return stack::parse_stack(head + fields, "p").profile.sends_cost();
  };
  CHECK(sends_cost("send_overhead_s: 1e-6"));
  CHECK(sends_cost("copy_s_per_byte: 1e-10"));
  CHECK(sends_cost("rendezvous_above_bytes: 65536"));
  CHECK_FALSE(sends_cost("recv_overhead_s: 1e-6"));
  CHECK_FALSE(sends_cost("call_overhead_s: 1e-6"));
  CHECK_FALSE(sends_cost("latency_factor { above_bytes: 0 value: 2 }"));
  CHECK_FALSE(stack::load_stack("ideal").profile.sends_cost());
  CHECK(stack::load_stack("openmpi-tcp").profile.sends_cost());
}
