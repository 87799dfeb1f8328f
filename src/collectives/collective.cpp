// The ranks of a phase, their point-to-point transfers, and the algorithm factory.
#include "collectives/collective.hpp"

#include "collectives/ring.hpp"
#include "common/error.hpp"

namespace sg4 = simgrid::s4u;

namespace ddlsim::collectives {
namespace {
// SimGrid transfers need a non-null payload; the simulated size is what counts.
char g_payload = 0;
} // namespace

CommWorld::CommWorld(std::vector<sg4::Host*> hosts, std::string tag)
    : hosts_(std::move(hosts))
    , tag_(std::move(tag))
    , sent_(hosts_.size(), 0)
    , received_(hosts_.size(), 0)
    , messages_(hosts_.size(), 0)
{
}

sg4::Mailbox* CommWorld::mailbox(int src, int dst)
{
  const std::uint64_t key = static_cast<std::uint64_t>(src) * hosts_.size() + static_cast<std::uint64_t>(dst);
  auto it = mailboxes_.find(key);
  if (it != mailboxes_.end())
    return it->second;
  auto* mb = sg4::Mailbox::by_name(tag_ + ":" + std::to_string(src) + ">" + std::to_string(dst));
  mailboxes_.emplace(key, mb);
  return mb;
}

void CommWorld::send_recv(int rank, int to, std::uint64_t send_bytes, int from)
{
  sg4::CommPtr send = mailbox(rank, to)->put_async(&g_payload, send_bytes);
  char* received = nullptr; // the payload pointer lands here; only the simulated size matters
  sg4::CommPtr recv = mailbox(from, rank)->get_async<char>(&received);
  recv->wait();
  send->wait();
  sent_[rank] += send_bytes;
  received_[to] += send_bytes; // counted by the sender: the receiver learns the size only from the message
  messages_[rank] += 1;
}

std::uint64_t chunk_bytes(std::uint64_t bytes, int parts, int index)
{
  const std::uint64_t base = bytes / static_cast<std::uint64_t>(parts);
  const std::uint64_t extra = bytes % static_cast<std::uint64_t>(parts);
  return base + (static_cast<std::uint64_t>(index) < extra ? 1 : 0);
}

std::unique_ptr<Collective> make_collective(const std::string& algorithm)
{
  if (algorithm == "ring")
    return std::make_unique<RingAllreduce>();
  throw ConfigError("--algorithm must be one of: " + known_algorithms() + " (got '" + algorithm + "')");
}

std::string known_algorithms() { return "ring"; }

} // namespace ddlsim::collectives
