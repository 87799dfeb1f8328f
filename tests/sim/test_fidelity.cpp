// Simulation tests: the form of the ring each --fidelity selects, seen in the messages every rank sends.
#include "collectives/algorithm_table.hpp"
#include "collectives/collective.hpp"
#include "sim/probe.hpp"
#include "support/test_platforms.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>

#include <catch2/catch.hpp>

using namespace ddlsim;
namespace sg4 = simgrid::s4u;

namespace {

/** @brief One ring allreduce of P x 1000 bytes over a star of `p` GPUs; checks every rank's message and byte
 *  counts. Message level (src/collectives/ring.cpp ring_steps): P-1 reduce-scatter and P-1 allgather steps of
 *  one message each, 2(P-1) messages. Flow level: one message carrying all but two of the P chunks it would
 *  send over the 2(P-1) steps, 2(P-1) chunks of 1000 bytes: the same bytes either way. */
void check_ring_messages(int p, collectives::Fidelity fidelity, std::uint64_t expected_messages)
{
  test::StarSpec star;
  star.hosts = p;
  test::ProbeEngine engine(test::write_star_platform(star));
  std::vector<sg4::Host*> hosts;
  for (const auto& name : engine.gpu_hosts())
    hosts.push_back(sg4::Host::by_name(name));
  REQUIRE(hosts.size() == static_cast<std::size_t>(p));

  collectives::CollectiveOptions options;
  options.fidelity = fidelity;
  collectives::CommWorld world(hosts, {}, options, "fidelity");
  collectives::Group group(world);
  const auto ring = collectives::make_collective(collectives::parse_algorithm("ring"), options);
  ring->prepare(world);
  const std::uint64_t bytes = 1000 * static_cast<std::uint64_t>(p);
  for (int r = 0; r < p; ++r)
    sg4::Actor::create("rank" + std::to_string(r), hosts[r], [&, r] { ring->allreduce(group, r, bytes); });
  engine.engine().run();

  for (int r = 0; r < p; ++r) {
    INFO("P = " << p << ", rank " << r);
    CHECK(world.messages_sent(r) == expected_messages);
    CHECK(world.bytes_sent(r) == 2 * static_cast<std::uint64_t>(p - 1) * 1000);
  }
}

constexpr std::uint64_t message_level(int p)
{
  return 2 * static_cast<std::uint64_t>(p - 1);
}

} // namespace

TEST_CASE("fidelity auto: the ring stays message-level at kFlowAboveRanks = 64 ranks")
{
  STATIC_REQUIRE(collectives::kFlowAboveRanks == 64);
  check_ring_messages(64, collectives::Fidelity::Auto, message_level(64));
}

TEST_CASE("fidelity auto: the ring is flow-level above kFlowAboveRanks, at 65 ranks")
{
  check_ring_messages(65, collectives::Fidelity::Auto, 1);
}

TEST_CASE("fidelity auto: the ring is message-level on 4 ranks")
{
  check_ring_messages(4, collectives::Fidelity::Auto, message_level(4));
}

TEST_CASE("fidelity message: the ring is message-level at 65 ranks")
{
  check_ring_messages(65, collectives::Fidelity::Message, message_level(65));
}

TEST_CASE("fidelity flow: the ring is flow-level at 4 ranks")
{
  check_ring_messages(4, collectives::Fidelity::Flow, 1);
}

TEST_CASE("fidelity steps: the ring sends every message of the message level at 65 ranks")
{
  check_ring_messages(65, collectives::Fidelity::Steps, message_level(65));
}
