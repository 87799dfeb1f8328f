// One small interface for gradient aggregation algorithms, and the ranks they run over.
#pragma once

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ddlsim::collectives {

/** @brief The ranks of one simulation phase: their hosts, their mailboxes and their traffic counters.
 *  Every transfer goes through send_recv(), which counts the bytes. */
class CommWorld {
public:
  /** `tag` keeps the mailboxes of different phases apart. */
  CommWorld(std::vector<simgrid::s4u::Host*> hosts, std::string tag);

  int size() const { return static_cast<int>(hosts_.size()); }
  simgrid::s4u::Host* host(int rank) const { return hosts_[rank]; }

  /** Sends `send_bytes` to rank `to` and receives one message from rank `from`, concurrently; returns when
   *  both are done. Messages between a pair of ranks are matched in order. */
  void send_recv(int rank, int to, std::uint64_t send_bytes, int from);

  std::uint64_t bytes_sent(int rank) const { return sent_[rank]; }
  std::uint64_t bytes_received(int rank) const { return received_[rank]; }
  std::uint64_t messages_sent(int rank) const { return messages_[rank]; }

private:
  simgrid::s4u::Mailbox* mailbox(int src, int dst);

  std::vector<simgrid::s4u::Host*> hosts_;
  std::string tag_;
  std::unordered_map<std::uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
  std::vector<std::uint64_t> sent_;
  std::vector<std::uint64_t> received_;
  std::vector<std::uint64_t> messages_;
};

/** @brief An allreduce algorithm. Every rank calls allreduce() for the same tensors in the same order. */
class Collective {
public:
  virtual ~Collective() = default;
  virtual std::string name() const = 0;
  /** Runs rank `rank`'s part of an allreduce of `bytes` bytes; returns when this rank holds the result. */
  virtual void allreduce(CommWorld& world, int rank, std::uint64_t bytes) const = 0;
};

/** @brief The algorithm of that name; throws ConfigError listing the known ones. */
std::unique_ptr<Collective> make_collective(const std::string& algorithm);

/** @brief Accepted algorithm names, comma separated. */
std::string known_algorithms();

/** @brief Byte size of chunk `index` when `bytes` is cut into `parts` nearly equal chunks (the first
 *  bytes % parts chunks get one byte more). */
std::uint64_t chunk_bytes(std::uint64_t bytes, int parts, int index);

} // namespace ddlsim::collectives
