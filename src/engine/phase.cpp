// One phase of a training simulation: a set of ranks runs the DAG, each rank on in-order stream actors.
#include "engine/phase.hpp"

#include "common/error.hpp"
#include "engine/interference.hpp"
#include "engine/link_log.hpp"
#include "engine/setup.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <mutex>
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace sg4 = simgrid::s4u;

namespace ddlsim::engine {
namespace {

/** Cores this process may run on: its affinity mask (taskset, a batch scheduler's cpuset), at least 1. */
unsigned usable_cores()
{
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

/** Completion flags of one rank's tasks, shared by its stream actors. SimGrid runs actors one at a time and
 *  switches only inside simcalls, so the flags can be read without the mutex; the mutex and the condition
 *  variable are used only when a stream actually has to wait (most tasks never do, and every simcall costs a
 *  context switch). */
struct RankState {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
  int waiting = 0; // stream actors inside the slow path (the completion times: Phase::Impl::done_at_)
  /** What those actors wait for (iteration, task): a finished task wakes them only when one of these is ready (a
   *  compute stream waiting for the update would otherwise wake at every aggregation). */
  std::vector<std::pair<int, const dag::Task*>> waits;
};

constexpr double kNotYet = std::numeric_limits<double>::infinity();

/** Channels of concurrent aggregations: communication stream k uses channel kChannelStride x k; an algorithm may use
 *  the channels above its group's (the double binary tree uses 4c + 1 and 4c + 2). */
constexpr int kChannelStride = 4;

} // namespace

/** The phase's state: the given ranks run `iterations` iterations of the DAG. */
struct Phase::Impl {
  explicit Impl(PhaseSpec spec)
      : name_(std::move(spec.name))
      , dag_(*spec.dag)
      , collective_(*spec.collective)
      , iterations_(spec.iterations)
      , reference_speed_(spec.reference_speed)
      , record_transfers_(spec.record_transfers)
      , transfer_ranks_(spec.transfer_ranks)
      , progress_(*spec.progress)
      , aggregation_progress_(*spec.aggregation_progress)
      , world_(hosts_of(spec.ranks), spec.node_of_rank, spec.options, name_)
      , states_(spec.ranks.size())
      , finished_(spec.iterations, 0)
      , iteration_end_(spec.iterations, 0.0)
      // Booked on a thread of its own where the process has a second core: the same results (LinkLog).
      , links_(spec.link_timelines, dag_.comm_streams, usable_cores() > 1)
      , limit_(spec.iterations)
  {
    if (spec.replicate_iterations && iterations_ > 1) {
      barrier_ = dag::iteration_barrier(dag_);
      probe_ = barrier_ >= 0 ? Probe::Open : Probe::Off;
    }
    const std::size_t tasks = dag_.tasks.size();
    done_at_.assign(static_cast<std::size_t>(iterations_) * tasks * states_.size(), kNotYet);
    nominal_ = nominal_times(spec);
    for (const auto& r : spec.ranks) {
      result_.hosts.push_back(r.name);
      result_.gpus.push_back(r.gpu);
    }
    result_.iterations = iterations_;
    result_.records.reserve(spec.ranks.size() * iterations_ * tasks);
    const int groups = dag_.comm_policy == dag::CommPolicy::InOrder ? dag_.comm_streams : 0;
    std::vector<int> channels;
    for (int k = 0; k < std::max(groups, 1); ++k) {
      groups_.push_back(std::make_unique<collectives::Group>(world_, all_ranks(), kChannelStride * k));
      channels.push_back(kChannelStride * k);
    }
    world_.set_lane_channels(channels); // parameter servers serve every lane with its own actor
    if (dag_.comm_policy == dag::CommPolicy::Priority)
      index_priority_dependents();
    collective_.prepare(world_); // outside any actor: may throw ConfigError
    attach_node_cpus(world_);    // --pcie-contention, --cpu-contention (interference.cpp); may throw ConfigError
    gpu_shares_ = gpu_interference_shares(world_);
    // One in-order stream, nothing else on the network (tasks run ahead: no staging copies, no servers of their
    // own), SimGrid's exact alpha-beta: the world is solo (CommWorld::run_flows). A flow plan then runs alone whether
    // one actor drives the stream or every rank has its own: Group::flow_call runs it once every rank has arrived,
    // when each has finished its earlier aggregations (their messages are done) and none sends until it ends.
    // Decided before drivable(), which it changes (the ring's driver posts its flows at any size). --per-rank-actors
    // (the reference shape) runs every flow in SimGrid.
    world_.set_static_links(spec.static_links);
    const bool one_stream = dag_.comm_policy == dag::CommPolicy::Priority || dag_.comm_streams == 1;
    world_.set_solo(spec.drive_streams && spec.exact_network && nominal_ && one_stream);
    // Several in-order streams, nothing else on the network: where the collective runs a whole stream as one program
    // that takes lanes (Collective::stream_program, StreamProgram::set_lanes), one driver runs every lane's
    // aggregations in it (drive_program), and the program's network is all the network carries: the world is solo.
    if (!world_.solo() && spec.drive_streams && spec.exact_network && nominal_ &&
        dag_.comm_policy == dag::CommPolicy::InOrder && dag_.comm_streams > 1 && !dag_.communication.empty())
      try_lanes_program(channels);
    // Several in-order streams, solo otherwise: mirrored lanes where every aggregation's plan is run_flows calls the
    // collective lists beforehand (CommWorld::set_mirror); before drivable() too (the ring's driver then posts its
    // flows at any size).
    if (!world_.solo() && spec.drive_streams && spec.exact_network && nominal_ &&
        dag_.comm_policy == dag::CommPolicy::InOrder) {
      world_.set_lanes_solo(true); // the lanes' plans are all the network carries if they are mirrored
      mirror_lanes();
      world_.set_lanes_solo(world_.mirrored());
    }
    // One stream, but plans whose flows several actors post at once (parameter servers' helpers): mirrored too, so
    // that those flows share ddlsim's own network (Collective::concurrent_flows).
    if (world_.solo() && collective_.concurrent_flows(*groups_.front()))
      mirror_lanes();
    // The streams of a solo world are driven (below) with each rank's start: a plan may end each rank at its own time
    // (drive_stream; drive_priority, where a rank starts a committed aggregation when it is done with the one before).
    // One in-order stream of a solo world: its driver may run every aggregation as one program, where the collective
    // (as the phase runs it: a stack's call costs, a switch by size) has one (Collective::stream_program,
    // drive_program). Otherwise no group is a whole stream, and no algorithm counts on one.
    // (The priority policy's one stream too: every rank runs the aggregations committed, in the order committed.)
    const bool whole = world_.solo() && dag_.comm_streams == 1 && !dag_.communication.empty();
    if (!program_) { // (a lanes' program keeps its groups' flags)
      for (auto& g : groups_) {
        g->set_member_timed(world_.solo());
        g->set_whole_stream(whole);
      }
      if (whole)
        program_ = collective_.stream_program(*groups_.front());
    }
    if (program_)
      program_->set_floor_sink([this](double t) { set_lanes_floor(t); });
    if (!program_)
      groups_.front()->set_whole_stream(false);
    driven_ = spec.drive_streams && drivable();
    if (!driven_ && program_)
      throw Error("internal: a whole stream's program, but the phase is not driven");
    if (!driven_)
      for (auto& g : groups_)
        g->set_member_timed(false);
    if (dag_.comm_policy == dag::CommPolicy::Priority && !driven_ && nominal_) {
      nominal_ = false; // per-rank actors and their scheduler (not drivable: an aggregation is no flow plan)
      world_.set_solo(false);
    }
    world_.on_transfer([this](int from, int to, std::uint64_t bytes, double start, double end, int channel) {
      links_.add(world_.transfer_route(from, to), bytes, start, end);
      record_transfer(from, to, bytes, start, end, channel);
    });
    world_.on_transfers([this](const collectives::CommWorld::TransferBatch& b) {
      links_.add(b);
      for (std::size_t i = 0; i < b.flows.size(); ++i)
        record_transfer(b.flows[i].from, b.flows[i].to, b.flows[i].bytes, b.start_s, b.end_s[i], b.channel);
    });
  }

  /** Keeps a transfer for the report and the trace (record_transfers_) if its ranks are kept. */
  void record_transfer(int from, int to, std::uint64_t bytes, double start, double end, int channel)
  {
    auto kept = [this](int r) { return transfer_ranks_.empty() || transfer_ranks_.count(r) > 0; };
    if (record_transfers_ && from < world_.size() && to < world_.size() && kept(from) && kept(to)) // no servers
      result_.transfers.push_back({from, to, channel / kChannelStride, bytes, start - start_, end - start_});
  }

  /** Runs the phase to completion; must be called from an actor. */
  dag::PhaseResult run()
  {
    start_ = sg4::Engine::get_clock();
    std::vector<sg4::ActorPtr> actors = collective_.start(world_, aggregation_sequence());
    services_ = actors; // the collective's own actors (parameter servers): stopped if the iterations repeat
    for (int r = 0; r < world_.size(); ++r) {
      const std::string id = name_ + "-rank" + std::to_string(r);
      actors.push_back(sg4::Actor::create(id + "-compute", world_.host(r),
                                          [this, r] { run_stream(r, dag_.compute, 1, 0, *groups_[0]); }));
      if (!dag_.input.empty())
        actors.push_back(sg4::Actor::create(id + "-input", world_.host(r),
                                            [this, r] { run_stream(r, dag_.input, 1, 0, *groups_[0]); }));
      if (!dag_.timer.empty())
        actors.push_back(sg4::Actor::create(id + "-timer", world_.host(r),
                                            [this, r] { run_stream(r, dag_.timer, 1, 0, *groups_[0]); }));
      if (dag_.comm_policy == dag::CommPolicy::InOrder && !dag_.communication.empty() && !driven_)
        for (int k = 0; k < dag_.comm_streams; ++k)
          actors.push_back(sg4::Actor::create(id + "-comm" + std::to_string(k), world_.host(r), [this, r, k] {
            run_stream(r, dag_.communication, dag_.comm_streams, k, *groups_[k]);
          }));
    }
    if (driven_ && dag_.comm_policy == dag::CommPolicy::InOrder && program_) // every lane in one program
      actors.push_back(sg4::Actor::create(name_ + "-comm", world_.host(0), [this] { drive_program(*program_); }));
    else if (driven_ && dag_.comm_policy == dag::CommPolicy::InOrder)
      for (int k = 0; k < dag_.comm_streams; ++k)
        actors.push_back(sg4::Actor::create(name_ + "-comm" + std::to_string(k), world_.host(0),
                                            [this, k] { drive_stream(dag_.comm_streams, k, *groups_[k]); }));
    if (dag_.comm_policy == dag::CommPolicy::Priority && driven_)
      actors.push_back(sg4::Actor::create(name_ + "-comm", world_.host(0), [this] { drive_priority(); }));
    else if (dag_.comm_policy == dag::CommPolicy::Priority && !dag_.communication.empty()) {
      actors.push_back(sg4::Actor::create(name_ + "-scheduler", world_.host(0), [this] { schedule_priority(); }));
      for (int r = 0; r < world_.size(); ++r)
        actors.push_back(sg4::Actor::create(name_ + "-rank" + std::to_string(r) + "-comm", world_.host(r),
                                            [this, r] { run_committed(r); }));
    }
    for (auto& a : actors)
      a->join();
    result_.duration_s = sg4::Engine::get_clock() - start_;
    const unsigned copies = probe_ == Probe::Identical ? iterations_ : 1;
    result_.iterations_simulated = probe_ == Probe::Identical ? 1 : iterations_;
    if (copies > 1)
      replicate(barrier_end_ - start_);
    result_.links = links_.usage(start_);
    result_.flows = world_.flows_posted();
    result_.computed = world_.flows_computed();
    result_.activities = result_.flows; // the rest: SimGrid's signals (simulation.cpp)
    // The algorithms' names, in name order.
    auto names = [](const std::set<collectives::AlgorithmId>& ids) {
      std::vector<std::string> out;
      for (collectives::AlgorithmId id : ids)
        out.emplace_back(collectives::entry(id).name);
      std::sort(out.begin(), out.end());
      return out;
    };
    result_.exact_flow_forms = names(world_.exact_forms());
    result_.computed_flow_forms = names(world_.computed_forms());
    for (int r = 0; r < world_.size(); ++r) {
      result_.bytes_sent.push_back(world_.bytes_sent(r) * copies);
      result_.bytes_received.push_back(world_.bytes_received(r) * copies);
    }
    return std::move(result_);
  }

private:
  std::vector<int> all_ranks() const
  {
    std::vector<int> ranks(states_.size());
    for (std::size_t r = 0; r < ranks.size(); ++r)
      ranks[r] = static_cast<int>(r);
    return ranks;
  }

  /** Every aggregation's bytes, in the order the communication stream runs them (for parameter servers). */
  std::vector<std::uint64_t> aggregation_sequence() const
  {
    std::vector<std::uint64_t> sequence;
    for (unsigned it = 0; it < iterations_; ++it)
      for (const auto& slot : dag_.communication)
        sequence.push_back(dag_.tasks[slot.task].bytes);
    return sequence;
  }

  double done_at(int rank, int iteration, int task) const { return done_at_[done_index(rank, iteration, task)]; }

  /** When every dependency of `task` is (or will be) done; kNotYet while one is unknown. */
  double ready_at(int rank, int it, const dag::Task& task) const { return ready_except(rank, it, task, -1, -1); }

  /** ready_at without the dependency on task `skip_task` of iteration `skip_it` (a stream's chain; -1: none). */
  double ready_except(int rank, int it, const dag::Task& task, int skip_it, int skip_task) const
  {
    double t = 0;
    for (int d : task.deps)
      if (it != skip_it || d != skip_task)
        t = std::max(t, done_at(rank, it, d));
    for (const auto& d : task.other) {
      const int other = it + d.offset;
      if (other >= 0 && other < static_cast<int>(iterations_) && (other != skip_it || d.task != skip_task))
        t = std::max(t, done_at(rank, other, d.task));
    }
    return t;
  }

  /** When every dependency of `task` is (or will be) done, once that is known: waits on the rank's condition
   *  variable while a completion time is unknown. kNotYet if the iterations were found to repeat meanwhile. */
  double known_ready_at(int rank, int it, const dag::Task& task) { return known_ready_except(rank, it, task, -1, -1); }

  /** known_ready_at for ready_except. */
  double known_ready_except(int rank, int it, const dag::Task& task, int skip_it, int skip_task)
  {
    double t = ready_except(rank, it, task, skip_it, skip_task);
    if (t != kNotYet)
      return t;
    RankState& state = states_[rank];
    ++state.waiting; // before the lock: a notifier that runs meanwhile sees it
    state.waits.emplace_back(it, &task);
    {
      std::unique_lock<sg4::Mutex> lock(*state.mutex);
      state.cv->wait(lock, [&] { return ready_except(rank, it, task, skip_it, skip_task) != kNotYet || !runs(it); });
    }
    --state.waiting;
    state.waits.erase(std::find(state.waits.begin(), state.waits.end(), std::make_pair(it, &task)));
    return runs(it) ? ready_except(rank, it, task, skip_it, skip_task) : kNotYet; // kNotYet: the iterations repeat
  }

  /** Returns once every dependency of `task` is done: sleeps until a known completion time, waits on the rank's
   *  condition variable while one is unknown. */
  void wait_ready(int rank, int it, const dag::Task& task)
  {
    const double t = known_ready_at(rank, it, task);
    if (t != kNotYet)
      catch_up(t);
  }

  /** True when one actor per communication stream can run every aggregation of the phase for all ranks at once
   *  (drive_stream): in-order streams whose tasks run ahead (nominal_, so every rank's readiness is a known time
   *  without its own actor) and an algorithm that runs each of the phase's tensors as one plan for the whole group
   *  (Collective::drivable: its flow forms). Every rank's communication actor would only wait for the last one. */
  bool drivable()
  {
    if (!nominal_ || dag_.communication.empty())
      return false;
    const std::set<std::uint64_t> sizes = aggregated_sizes();
    for (const auto& group : groups_)
      group->set_sizes({sizes.begin(), sizes.end()});
    for (const auto& group : groups_)
      for (std::uint64_t bytes : sizes)
        if (!collective_.drivable(*group, bytes))
          return false;
    return true;
  }

  /** Every tensor size the phase aggregates. */
  std::set<std::uint64_t> aggregated_sizes() const
  {
    std::set<std::uint64_t> sizes;
    for (const auto& slot : dag_.communication)
      sizes.insert(dag_.tasks[slot.task].bytes);
    return sizes;
  }

  /** Several in-order streams of a world with nothing else on the network: asks the collective for a whole stream's
   *  program (the first lane's group a whole stream, member-timed, the world solo) and gives it the lanes' channels.
   *  Where it has none, or one that runs one lane only, the world and the groups are left as they were. */
  void try_lanes_program(const std::vector<int>& channels)
  {
    world_.set_solo(true);
    const std::set<std::uint64_t> sizes = aggregated_sizes(); // (a choice by size asks: Nccl)
    for (auto& g : groups_) {
      g->set_member_timed(true);
      g->set_whole_stream(true);
      g->set_sizes({sizes.begin(), sizes.end()});
    }
    program_ = collective_.stream_program(*groups_.front());
    if (program_ && program_->set_lanes(channels))
      return;
    program_.reset();
    world_.set_solo(false);
    for (auto& g : groups_) {
      g->set_member_timed(false);
      g->set_whole_stream(false);
      g->set_sizes({}); // (drivable() sets them, as before)
    }
  }

  /** Mirrors the lanes (CommWorld::set_mirror) when the collective says which run_flows (or run_staggered:
   *  Collective::posts_apart) calls each tensor's plan makes (Collective::flow_calls; every lane's group has the same
   *  members). */
  void mirror_lanes()
  {
    std::vector<std::vector<collectives::Flow>> calls;
    for (std::uint64_t bytes : aggregated_sizes()) {
      auto more = collective_.flow_calls(*groups_.front(), bytes);
      if (more.empty())
        return;
      for (auto& c : more)
        calls.push_back(std::move(c));
    }
    // A plan that posts flows apart (run_staggered) is mirrored without classes (a class's representative would stand
    // for flows posted at other instants), and only where the mirror is computed (SimGrid would run every flow).
    const bool apart = collective_.posts_apart(*groups_.front());
    if (world_.set_mirror(calls, !apart) && apart && !world_.computed())
      world_.drop_mirror();
  }

  /** Communication stream `lane` of every rank at once (drivable()): each aggregation starts on a rank when it is
   *  ready there (the DAG chains a stream's entries, so that is never before the stream is free), its plan runs when
   *  the last rank has started (as Group::flow_call's driver runs it), and it ends on every rank when the plan is
   *  done, or, member-timed (Group::member_timed), the plan is given each rank's start and may end each rank at
   *  its own time (never before its start). The same entries as run_stream's. */
  void drive_stream(int lanes, int lane, collectives::Group& group)
  {
    if (program_)
      throw Error("internal: a lane of a whole stream's program driven on its own (drive_program drives them all)");
    std::vector<double> starts(static_cast<std::size_t>(world_.size()));
    collectives::Group::MemberTimes times; // the group's members are the ranks, in order
    for_each_entry(dag_.communication, lanes, lane, [&](int it, const dag::Task& task) {
      double last = start_; // none starts before the phase
      for (int r = 0; r < world_.size(); ++r) {
        const double ready = runs(it) ? known_ready_at(r, it, task) : kNotYet;
        if (ready == kNotYet)
          return false; // the iterations repeat (replicate)
        starts[r] = std::max(ready, start_);
        last = std::max(last, starts[r]);
      }
      catch_up(last);
      note_aggregation(it);
      links_.set_floor(lane, *std::min_element(starts.begin(), starts.end())); // no rank's transfer starts earlier
      times.starts = starts;
      times.ends.clear();
      group.set_member_times(group.member_timed() ? &times : nullptr);
      collective_.drive(group, task.bytes);
      group.set_member_times(nullptr);
      const double end = sg4::Engine::get_clock();
      for (int r = 0; r < world_.size(); ++r)
        finish(r, it, task.id, starts[r], times.ends.empty() ? end : times.ends[r]);
      // The lane's next aggregation starts on a rank once the rank has ended this one (the DAG chains the stream's
      // entries): no transfer of the lane starts before the earliest end. A lane idle while another works would
      // otherwise hold every link's intervals since its last start (hd with two streams under grpc-tcp at 1,024 GPUs:
      // one lane's last start 0.198 s, the other lane busy until 0.474 s, 2.9 million intervals held).
      links_.set_floor(lane, times.ends.empty() ? end : *std::min_element(times.ends.begin(), times.ends.end()));
      return true;
    });
    links_.set_floor(lane, std::numeric_limits<double>::infinity()); // the lane adds no transfer any more
  }

  /** Every communication stream (lane) of every rank at once, as one program (Group::whole_stream): each rank's
   *  aggregations in each lane are given to it in order as their readiness becomes known (the readiness without the
   *  lane's chain, which the program keeps: a rank starts an aggregation when it is ready and the rank is done with the
   *  lane's one before), and the program runs until a rank that may need one not known yet is done with all it was
   *  given in that lane; what ended is then finished, which lets that rank's other streams run ahead to its next
   *  readiness (a rank's readiness depends on its own tasks only). The driver waits for a readiness only where the
   *  rank has ended everything it was given in every lane: a readiness may wait on the rank's aggregation in another
   *  lane, which only the program can end. Where a rank is idle in one lane and busy in another, the rank's other
   *  streams are first let run (settle); a readiness still unknown then waits on one of the rank's aggregations in
   *  flight, and the program stops at the rank's next end in any lane. An aggregation of a later iteration given while
   *  the phase may still find the iterations repeat marks them as not repeating (note_aggregation), as the message
   *  level's probe would see it start before every rank ended the first: the phase then simulates every iteration.
   *  The entries of drive_stream, lane by lane. */
  void drive_program(collectives::StreamProgram& program)
  {
    struct Entry {
      int it;
      const dag::Task* task;
    };
    const std::size_t lanes = static_cast<std::size_t>(dag_.comm_streams);
    std::vector<std::vector<Entry>> entries(lanes);
    for (std::size_t l = 0; l < lanes; ++l)
      for_each_entry(dag_.communication, dag_.comm_streams, static_cast<int>(l), [&](int it, const dag::Task& task) {
        entries[l].push_back({it, &task});
        return true;
      });
    const std::size_t ranks = static_cast<std::size_t>(world_.size());
    std::vector<std::size_t> given(lanes * ranks, 0), ended(lanes * ranks, 0); // [lane * ranks + rank]
    std::vector<char> open(lanes * ranks, 0);
    std::vector<collectives::StreamProgram::Ended> out;
    std::size_t ends = 0; // a program may end every aggregation of the phase in one run: room for all at once
    for (const auto& lane : entries)
      ends += lane.size() * ranks;
    out.reserve(ends);
    double last = start_;
    auto busy = [&](std::size_t r) { // the rank has an aggregation given and not ended in some lane
      for (std::size_t l = 0; l < lanes; ++l)
        if (ended[l * ranks + r] < given[l * ranks + r])
          return true;
      return false;
    };
    std::vector<char> stuck(lanes);
    for (;;) {
      if (lanes > 1)
        settle(); // the ranks' other streams run ahead to what the ends finished so far let them reach
      for (std::size_t r = 0; r < ranks; ++r) { // give each rank what is known, in the order of the entries
        const int rank = static_cast<int>(r);
        std::fill(stuck.begin(), stuck.end(), 0);
        bool waits = false; // idle in a lane whose next readiness waits on the rank's work in another
        for (std::size_t l = 0; l < lanes; ++l)
          open[l * ranks + r] = collectives::StreamProgram::kUnwatched;
        for (;;) {
          // The lane whose next entry comes first among all lanes' (entry p of lane l is the phase's p * lanes + l).
          std::size_t l = lanes;
          for (std::size_t m = 0; m < lanes; ++m) {
            const std::size_t i = m * ranks + r;
            if (stuck[m] == 0 && given[i] < entries[m].size() && runs(entries[m][given[i]].it) &&
                (l == lanes || given[i] < given[l * ranks + r]))
              l = m;
          }
          if (l == lanes)
            break;
          const std::size_t i = l * ranks + r;
          const Entry& e = entries[l][given[i]];
          const bool idle = ended[i] == given[i];
          const int chain_it = given[i] > 0 ? entries[l][given[i] - 1].it : -1;
          const int chain_task = given[i] > 0 ? entries[l][given[i] - 1].task->id : -1;
          double ready = ready_except(rank, e.it, *e.task, chain_it, chain_task);
          // It may need it now: its other streams get there first, unless what it waits on may be one of the rank's
          // own aggregations not ended yet (in flight in a lane, or an earlier entry not given).
          if (ready == kNotYet && !busy(r) && std::find(stuck.begin(), stuck.end(), 1) == stuck.end())
            ready = known_ready_except(rank, e.it, *e.task, chain_it, chain_task);
          if (ready == kNotYet) {
            stuck[l] = 1;
            if (!idle) // not known yet, the rank busy in the lane: the program stops when it is done there
              open[i] = collectives::StreamProgram::kAllEnded;
            else
              waits = true; // (or: the iterations repeat)
            continue;
          }
          note_aggregation(e.it);
          program.give(static_cast<int>(l), rank, e.task->bytes, std::max(ready, start_));
          ++given[i];
        }
        if (waits)
          for (std::size_t l = 0; l < lanes; ++l) // what it waits on ends in one of its busy lanes
            if (ended[l * ranks + r] < given[l * ranks + r])
              open[l * ranks + r] = collectives::StreamProgram::kAnyEnd;
      }
      if (program.idle())
        break; // everything given has ended, and nothing more is (or the iterations repeat)
      set_lanes_floor(program.floor_s());
      if (program.run(open, out) == 0)
        throw Error("internal: a stream program ran no step with aggregations in flight");
      for (const auto& x : out) {
        const std::size_t l = static_cast<std::size_t>(x.lane);
        const Entry& e = entries[l][x.k];
        ++ended[l * ranks + static_cast<std::size_t>(x.member)];
        last = std::max(last, x.end_s);
        finish(x.member, e.it, e.task->id, x.start_s, x.end_s);
      }
      out.clear();
    }
    catch_up(last); // the streams end when their last aggregation does
  }

  /** Every lane's floor in the link log at `t`: one program drives them all (drive_program). */
  void set_lanes_floor(double t)
  {
    for (int k = 0; k < dag_.comm_streams; ++k)
      links_.set_floor(k, t);
  }

  /** Lets every other actor run until it waits (the ranks' streams running ahead to the readiness the ends finished
   *  so far let them reach), without moving the clock: a wait whose timeout is now ends after the engine's actors
   *  have all run at this instant. */
  void settle()
  {
    std::unique_lock<sg4::Mutex> lock(*settle_mutex_);
    settle_cv_->wait_for(lock, 0.0);
  }

  /** Sleeps until `t` if it is in the future. */
  static void catch_up(double t)
  {
    const double now = sg4::Engine::get_clock();
    if (t > now)
      sg4::this_actor::sleep_for(t - now);
  }

  /** True when every compute and fixed-time task takes exactly its nominal time (nothing else shares the GPUs: no
   *  interference load, no parameter-server update on a rank's host; constant host speeds) and no scheduler of
   *  per-rank actors watches readiness as the clock reaches it (CommPolicy::InOrder, or CommPolicy::Priority driven
   *  by one actor, which reads the readiness times: drive_priority). Streams then run such tasks ahead on their own
   *  clock (run_stream). */
  bool nominal_times(const PhaseSpec& spec) const
  {
    const collectives::CollectiveOptions& o = spec.options;
    if (o.gpu_interference > 0 || o.gpu_interference_auto)
      return false;
    if (dag_.comm_policy == dag::CommPolicy::Priority && !spec.drive_streams)
      return false; // the scheduler of every rank's actor watches readiness as the clock reaches it
    if (o.pcie_contention || o.cpu_contention)
      return false; // input tasks become transfers and CPU work (interference.cpp)
    if (spec.options.ps_update == collectives::PsUpdate::Server && spec.options.ps_hosts.empty())
      return false; // co-located servers execute updates on rank hosts
    for (const auto& r : spec.ranks) {
      const sg4::Host* h = r.host; // (Host::by_name searches every zone of the platform)
      if (h->get_speed() != h->get_pstate_speed(h->get_pstate()))
        return false; // a speed profile: the time of an execution depends on when it runs
    }
    return true;
  }

  /** The time `task` takes on `rank` when it runs alone (nominal_), or a negative value for an aggregation. */
  double nominal_s(int rank, const dag::Task& task) const
  {
    switch (task.kind) {
    case dag::TaskKind::Io:
    case dag::TaskKind::H2d:
    case dag::TaskKind::Timer:
      return std::max(task.duration_s, 0.0);
    case dag::TaskKind::Forward:
    case dag::TaskKind::Backward:
    case dag::TaskKind::Update:
      return task.duration_s > 0 ? task.duration_s * reference_speed_ / world_.host(rank)->get_speed() : 0.0;
    case dag::TaskKind::Aggregation:
      break;
    }
    return -1;
  }

  // --- Replication: when dag::iteration_barrier names the task that closes every iteration, the phase watches
  // iteration 0's. If it ends on every rank at one instant T, all of iteration 0 has ended everywhere, and at T
  // a rank that got there first can only have started iteration 1's tasks on its own GPU (no aggregation: those
  // need the other ranks; if one was started all the same, the phase simulates every iteration). Every later
  // iteration is then iteration 0 shifted by T: the streams stop at T, what iteration 1 started on a rank's own GPU
  // finishes unrecorded, and run() copies iteration 0. Nothing changes in the order the simulation runs until
  // that is decided, so a phase that does not repeat runs exactly as without the check.

  bool runs(int it) const { return it < static_cast<int>(limit_); }

  /** An aggregation of iteration `it` starts. */
  void note_aggregation(int it)
  {
    if (it >= 1 && probe_ == Probe::Open)
      probe_ = Probe::Different; // it involves ranks still in iteration 0 (or about to stop): keep simulating
  }

  /** Iteration 0's barrier task ended on a rank at `end`. */
  void note_barrier(double end)
  {
    if (barrier_ranks_++ == 0)
      barrier_end_ = end;
    else if (end != barrier_end_)
      probe_ = Probe::Different; // some rank ends iteration 0 later: simulate every iteration
    if (probe_ != Probe::Open || barrier_ranks_ < world_.size())
      return;
    probe_ = Probe::Identical;
    limit_ = 1;
    for (auto& a : services_) // parameter servers wait for iteration 1's gradients
      a->kill();
    for (auto& state : states_)
      if (state.waiting > 0) {
        std::unique_lock<sg4::Mutex> lock(*state.mutex);
        state.cv->notify_all();
      }
    if (dag_.comm_policy == dag::CommPolicy::Priority) {
      wake_scheduler();
      for (auto& q : queues_)
        if (q.waiting) {
          std::unique_lock<sg4::Mutex> lock(*q.mutex);
          q.cv->notify_one();
        }
    }
  }

  /** Iterations 1.. as copies of iteration 0, every one `period` seconds after the one before. */
  void replicate(double period)
  {
    // Tasks of iteration 1 that took no time and ended at the instant of the decision, before it, are dropped too.
    auto& records = result_.records;
    records.erase(std::remove_if(records.begin(), records.end(), [](const auto& r) { return r.iteration != 0; }),
                  records.end());
    const std::size_t n = result_.records.size();
    result_.records.reserve(n * iterations_);
    for (unsigned k = 1; k < iterations_; ++k) {
      const double shift = k * period;
      for (std::size_t i = 0; i < n; ++i) {
        dag::TaskRecord r = result_.records[i];
        r.iteration = static_cast<int>(k);
        r.start_s += shift;
        r.end_s += shift;
        result_.records.push_back(r);
      }
      if (progress_)
        progress_(name_, k, (k + 1) * period);
    }
    links_.repeat(iterations_, period);
    result_.duration_s = iterations_ * period;
  }

  /** Runs the entries k of `order` (counted over all slots) with k mod `lanes` = `lane`. */
  void run_stream(int rank, const std::vector<dag::Slot>& order, int lanes, int lane, collectives::Group& group)
  {
    double clock = sg4::Engine::get_clock(); // when this stream is free (ahead of the engine's while running ahead)
    const bool whole = for_each_entry(order, lanes, lane, [&](int it, const dag::Task& task) {
      if (!runs(it))
        return false; // the iterations repeat (replicate)
      if (nominal_) {
        // Run ahead: a task whose dependencies have known completion times starts at the later of those and the
        // stream's own clock and ends its nominal time later, with no simcall. A task of fixed time whose dependencies
        // are not known yet waits until they are (an aggregation's end, noted when it ends) and then runs ahead all
        // the same; an aggregation waits for the clock first.
        const double duration = nominal_s(rank, task);
        if (duration >= 0) {
          const double ready = known_ready_at(rank, it, task);
          if (ready == kNotYet)
            return false; // the iterations repeat (replicate)
          const double start = std::max(clock, ready);
          clock = start + duration;
          finish(rank, it, task.id, start, clock);
          return true;
        }
        catch_up(clock);
      }
      wait_ready(rank, it, task);
      if (!runs(it))
        return false;
      const double start = sg4::Engine::get_clock();
      execute(rank, it, task, group);
      clock = sg4::Engine::get_clock();
      finish(rank, it, task.id, start, clock);
      return true;
    });
    if (whole)
      catch_up(clock); // the stream ends when its last task does
  }

  /** Calls fn(iteration, task) for the entries k of `order` (counted over all slots, each slot an iteration shifted by
   *  its entries' shift) with k mod `lanes` = `lane`, in order, while it returns true; false if it stopped early. */
  template <class Fn>
  bool for_each_entry(const std::vector<dag::Slot>& order, int lanes, int lane, Fn fn) const
  {
    const int n = static_cast<int>(order.size());
    const int slots = static_cast<int>(iterations_) + dag_.max_shift();
    for (int s = 0; s < slots; ++s)
      for (int j = 0; j < n; ++j) {
        if ((static_cast<long>(s) * n + j) % lanes != lane)
          continue;
        const int it = s - order[j].shift;
        if (it >= 0 && it < static_cast<int>(iterations_) && !fn(it, dag_.tasks[order[j].task]))
          return false;
      }
    return true;
  }

  void execute(int rank, int it, const dag::Task& task, collectives::Group& group)
  {
    switch (task.kind) {
    case dag::TaskKind::Io:
    case dag::TaskKind::H2d: // fixed times (they do not depend on the GPU), or contended (interference.cpp)
      run_input_task(world_, rank, task.kind == dag::TaskKind::Io, task.duration_s);
      break;
    case dag::TaskKind::Timer:
      if (task.duration_s > 0)
        sg4::this_actor::sleep_for(task.duration_s);
      break;
    case dag::TaskKind::Forward:
    case dag::TaskKind::Backward:
    case dag::TaskKind::Update: // reference-GPU time replayed as work, so a faster GPU takes less time
      if (task.duration_s > 0)
        sg4::this_actor::execute(task.duration_s * reference_speed_);
      break;
    case dag::TaskKind::Aggregation: {
      note_aggregation(it);
      const sg4::ExecPtr load = start_interference(rank);
      collective_.allreduce(group, rank, task.bytes);
      if (load)
        load->cancel();
      break;
    }
    }
  }

  /** With gpu_interference f > 0: an execution on this actor's GPU that runs as long as the aggregation, with the
   *  sharing weight f / (1 - f), so that compute running meanwhile on that GPU gets 1 - f of its speed (SimGrid
   *  shares a host's speed among its executions in proportion to their priorities). Idle compute loses nothing. */
  sg4::ExecPtr start_interference(int rank) const
  {
    const double f = gpu_shares_[rank];
    if (f <= 0)
      return nullptr;
    const double endless_s = 1e9; // longer than any phase; cancelled when the aggregation ends
    sg4::ExecPtr load = sg4::this_actor::exec_init(endless_s * sg4::this_actor::get_host()->get_speed());
    load->set_priority(f / (1 - f));
    load->start();
    return load;
  }

  /** Records the task, marks it done (at `end`, possibly in the future: run_stream), wakes whoever waits for it. */
  void finish(int rank, int it, int id, double start, double end)
  {
    if (!runs(it))
      return; // started on a rank's own GPU at the instant the iterations were found to repeat
    result_.records.push_back(dag::TaskRecord{rank, it, id, start - start_, end - start_});
    RankState& state = states_[rank];
    done_at_[done_index(rank, it, id)] = end;
    if (probe_ == Probe::Open && it == 0 && id == barrier_)
      note_barrier(end);
    if (state.waiting > 0 && std::any_of(state.waits.begin(), state.waits.end(), [&](const auto& w) {
          return ready_at(rank, w.first, *w.second) != kNotYet;
        })) {
      std::unique_lock<sg4::Mutex> lock(*state.mutex);
      state.cv->notify_all();
    }
    if (!priority_dependents_.empty())
      note_priority_readiness(rank, it, id);
    if (rank == 0 && aggregation_progress_ && dag_.tasks[id].kind == dag::TaskKind::Aggregation)
      aggregation_progress_(name_, ++aggregations_done_,
                            static_cast<std::size_t>(iterations_) * static_cast<std::size_t>(dag_.aggregations()));
    iteration_end_[it] = std::max(iteration_end_[it], end); // streams that run ahead finish out of time order
    if (++finished_[it] == world_.size() * dag_.tasks.size() && progress_)
      progress_(name_, static_cast<unsigned>(it), iteration_end_[it] - start_);
  }

  // --- CommPolicy::Priority: one scheduler decides for every rank (all ranks commit the same aggregation, as
  // Horovod's coordinator orders them) once it is ready on all ranks, lowest priority first, while the committed
  // bytes not yet reduced stay within the credit; each rank's stream runs what was committed, in order.

  void index_priority_dependents()
  {
    priority_dependents_.resize(dag_.tasks.size());
    for (const auto& slot : dag_.communication)
      for (int d : dag_.tasks[slot.task].deps)
        priority_dependents_[d].push_back(slot.task);
    ready_ranks_.assign(static_cast<std::size_t>(iterations_) * dag_.tasks.size(), 0);
    ready_time_.assign(ready_ranks_.size(), 0.0);
    queues_ = std::vector<CommQueue>(states_.size());
    scheduler_cv_ = sg4::ConditionVariable::create();
    scheduler_mutex_ = sg4::Mutex::create();
  }

  void note_priority_readiness(int rank, int it, int id)
  {
    for (int agg : priority_dependents_[id]) {
      // Ready on this rank now (per-rank actors: tasks finish as the clock reaches their end), or known to be ready at
      // a time (driven: tasks that run ahead finish early, with their end in the future). Either holds first when
      // the last of the aggregation's dependencies on the rank finishes: counted once per rank.
      const double at = ready_at(rank, it, dag_.tasks[agg]);
      if (driven_ ? at == kNotYet : at > sg4::Engine::get_clock())
        continue;
      const std::size_t k = static_cast<std::size_t>(it) * dag_.tasks.size() + agg;
      ready_time_[k] = std::max(ready_time_[k], at);
      if (++ready_ranks_[k] == world_.size()) {
        if (driven_)
          pending_heap_.emplace(ready_time_[k], it, dag_.tasks[agg].priority, agg);
        else
          ready_heap_.emplace(it, dag_.tasks[agg].priority, agg);
        wake_scheduler();
      }
    }
  }

  void wake_scheduler()
  {
    std::unique_lock<sg4::Mutex> lock(*scheduler_mutex_);
    scheduler_cv_->notify_all();
  }

  void schedule_priority()
  {
    std::size_t launched = 0;
    while (launched < committed_total()) {
      std::unique_lock<sg4::Mutex> lock(*scheduler_mutex_);
      for (int it, agg; admit_next(it, agg); ++launched)
        launch(it, agg);
      if (launched < committed_total())
        scheduler_cv_->wait(lock);
    }
  }

  /** The scheduler and every rank's communication stream in one actor (drivable(): every aggregation is a flow plan,
   *  the tasks run ahead). An aggregation is ready when its dependencies are done on every rank: the latest of those
   *  times, known once the streams have run ahead to it (note_priority_readiness: pending_heap_). At each such time,
   *  in time order, the scheduler commits what is ready as schedule_priority does (lowest priority first, while the
   *  credit allows); the stream runs the committed aggregations in commit order, each when the one before has ended,
   *  for every rank at once, as Group::flow_call's driver does for the per-rank actors (which all start a committed
   *  aggregation at the same time: when it is committed, or when the one before ends everywhere). */
  void drive_priority()
  {
    if (program_) {
      drive_priority_program(*program_);
      return;
    }
    // (iteration, aggregation, when it was committed), in commit order. A rank's stream runs a committed aggregation
    // at the later of that time and its own end of the one before (run_committed).
    Committed committed;
    auto commit = [&](double at) { commit_ready(committed, at); };
    auto admit = [&](double t, bool at_t) { admit_ready(committed, t, at_t); };
    collectives::Group& group = *groups_[0];
    // Member-timed (Group::member_timed): each rank's own start and end, as its stream has them at message level.
    std::vector<double> free_at(static_cast<std::size_t>(world_.size()), start_), starts(free_at.size());
    collectives::Group::MemberTimes times;
    std::size_t done = 0;
    while (done < committed_total()) {
      if (committed.empty()) {
        std::unique_lock<sg4::Mutex> lock(*scheduler_mutex_); // the streams note readiness under it (wake_scheduler)
        admit(sg4::Engine::get_clock(), true);
        if (committed.empty()) {
          if (done >= committed_total())
            break; // the iterations repeat: nothing more is committed
          if (pending_heap_.empty())
            scheduler_cv_->wait(lock); // until the streams know another readiness time
          else
            scheduler_cv_->wait_until(lock, std::get<0>(pending_heap_.top())); // or earlier, for an earlier one
          continue;
        }
      }
      const auto [it, agg, at] = committed.front();
      committed.pop_front();
      const dag::Task& task = dag_.tasks[agg];
      const double now = sg4::Engine::get_clock();
      for (std::size_t r = 0; r < starts.size(); ++r)
        starts[r] = group.member_timed() ? std::max(at, free_at[r]) : now;
      note_aggregation(it);
      links_.set_floor(0, *std::min_element(starts.begin(), starts.end())); // no rank's transfer starts earlier
      times.starts = starts;
      times.ends.clear();
      group.set_member_times(group.member_timed() ? &times : nullptr);
      collective_.drive(group, task.bytes);
      group.set_member_times(nullptr);
      // The last rank's end frees the credit. A plan may leave the clock past it (run_timed runs a class of
      // components whose posts lie in the past from now), or just before it (a member's receive overhead after its
      // leader's end).
      double end = sg4::Engine::get_clock();
      if (!times.ends.empty()) {
        end = *std::max_element(times.ends.begin(), times.ends.end());
        collectives::CommWorld::delay_until(end);
      }
      admit(end, false); // what became ready while it ran, with its credit still taken
      // What these ends make ready is ready at `end` or later: every rank's stream holds the same tasks in the same
      // order, so what waits for the aggregation on one rank waits for it on every rank, the last one's too.
      for (int r = 0; r < world_.size(); ++r) { // a plan that ends every rank at once ran from now on every rank
        free_at[r] = times.ends.empty() ? end : times.ends[r];
        finish(r, it, agg, times.ends.empty() ? now : starts[r], free_at[r]);
      }
      release(agg);
      ++done;
      admit(end, true);
      commit(end);
    }
  }

  /** drive_priority with the collective's program (Group::whole_stream): every rank is given each aggregation when it
   *  is committed, ready at its commit time, and starts it when it is done with the one committed before (as
   *  drive_priority's member times have it), so that aggregations in flight together share the network as at message
   *  level. The scheduler acts at two kinds of instant, and the program stops at each: the end of the oldest
   *  aggregation in flight on its last rank (watch_aggregation), which frees its credit, and the next readiness known
   *  (set_horizon), which may be committed then. A readiness waits on the aggregations it depends on ending on every
   *  rank (each rank's own part of it), so it is known, once the ends so far are finished and the ranks' streams have
   *  run ahead to them (settle), by the stop at the last of those aggregations' ends: never after its own time. */
  void drive_priority_program(collectives::StreamProgram& program)
  {
    Committed committed; // not yet given
    auto commit = [&](double at) { commit_ready(committed, at); };
    auto admit = [&](double t, bool at_t) { admit_ready(committed, t, at_t); };
    struct Given {
      int it, agg;
      double end = 0; ///< its last rank's end so far
      int ended = 0;  ///< ranks that ended it
    };
    std::vector<Given> given; // in the order committed: the program's aggregation k
    std::size_t done = 0;     // the oldest not ended on every rank
    std::vector<collectives::StreamProgram::Ended> out;
    const std::vector<char> unwatched;
    double last = start_;
    for (;;) {
      settle(); // the ranks' streams run ahead to what the ends finished so far let them reach
      while (!committed.empty()) {
        const auto [it, agg, at] = committed.front();
        committed.pop_front();
        note_aggregation(it);
        for (int r = 0; r < world_.size(); ++r)
          program.give(r, dag_.tasks[agg].bytes, std::max(at, start_));
        given.push_back({it, agg});
      }
      if (done >= committed_total())
        break;                                                // (fewer when the iterations repeat)
      if (done == given.size()) {                             // nothing in flight: the next readiness is committed
        std::unique_lock<sg4::Mutex> lock(*scheduler_mutex_); // the streams note readiness under it
        if (!pending_heap_.empty())
          admit(std::get<0>(pending_heap_.top()), true);
        else if (done < committed_total())
          scheduler_cv_->wait(lock); // until the streams know another readiness time
        continue;
      }
      program.set_horizon(pending_heap_.empty() ? std::numeric_limits<double>::infinity()
                                                : std::get<0>(pending_heap_.top()));
      program.watch_aggregation(0, done);
      links_.set_floor(0, program.floor_s());
      program.run(unwatched, out);
      for (const auto& x : out) {
        Given& g = given[x.k];
        g.end = std::max(g.end, x.end_s);
        ++g.ended;
        last = std::max(last, x.end_s);
        finish(x.member, g.it, g.agg, x.start_s, x.end_s);
      }
      out.clear();
      bool freed = false;
      while (done < given.size() && given[done].ended == world_.size()) { // ended on every rank: its credit freed
        const double end = given[done].end;
        admit(end, false); // what became ready while it ran, with its credit still taken
        release(given[done].agg);
        ++done;
        admit(end, true);
        commit(end);
        freed = true;
      }
      if (!freed && !pending_heap_.empty()) // stopped at the horizon: what is ready then
        admit(std::get<0>(pending_heap_.top()), true);
    }
    program.set_horizon(std::numeric_limits<double>::infinity());
    catch_up(last); // the stream ends when its last aggregation does
  }

  /** The priority policy's commits, in commit order: (iteration, aggregation, when committed). */
  using Committed = std::deque<std::tuple<int, int, double>>;

  /** Commits, at `at`, the ready aggregations the credit lets in (admit_next). */
  void commit_ready(Committed& committed, double at)
  {
    for (int it, agg; admit_next(it, agg);)
      committed.emplace_back(it, agg, at);
  }

  /** The readiness times up to `t` (before it, or also at it, per `at_t`), one instant after the other: the scheduler
   *  wakes at each and commits what is ready then. */
  void admit_ready(Committed& committed, double t, bool at_t)
  {
    while (!pending_heap_.empty()) {
      const double when = std::get<0>(pending_heap_.top());
      if (when > t || (!at_t && when == t))
        break;
      while (!pending_heap_.empty() && std::get<0>(pending_heap_.top()) == when) {
        const auto [at, it, prio, agg] = pending_heap_.top();
        pending_heap_.pop();
        ready_heap_.emplace(it, prio, agg);
      }
      commit_ready(committed, when);
    }
  }

  /** Aggregations the priority policy commits in the phase (fewer when the iterations repeat). */
  std::size_t committed_total() const { return static_cast<std::size_t>(limit_) * dag_.communication.size(); }

  /** One aggregation every rank runs; `remaining` counts the ranks that still hold no result. */
  struct Job {
    int it, agg;
    std::shared_ptr<int> remaining;
  };
  /** A rank's communication stream under the priority policy: the aggregations the scheduler committed, run one
   *  after the other in that order (collectives on one stream do not overtake each other). */
  struct CommQueue {
    std::deque<Job> jobs;
    sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
    sg4::MutexPtr mutex = sg4::Mutex::create();
    bool waiting = false;
  };

  /** The next ready aggregation the credit admits (ByteScheduler admits while credit is left, bytecore.py): taken off
   *  the ready heap and its bytes counted in flight; false if there is none. */
  bool admit_next(int& it, int& agg)
  {
    if (ready_heap_.empty() || in_flight_bytes_ >= dag_.credit_bytes)
      return false;
    std::tie(it, std::ignore, agg) = ready_heap_.top();
    ready_heap_.pop();
    in_flight_bytes_ += dag_.tasks[agg].bytes;
    return true;
  }

  /** Aggregation `agg` holds its result on every rank: its bytes leave the credit. */
  void release(int agg) { in_flight_bytes_ -= dag_.tasks[agg].bytes; }

  /** Commits aggregation `agg` of iteration `it` (admitted: admit_next) to every rank's communication stream. */
  void launch(int it, int agg)
  {
    const Job job{it, agg, std::make_shared<int>(world_.size())};
    for (auto& q : queues_) {
      q.jobs.push_back(job);
      if (q.waiting) {
        std::unique_lock<sg4::Mutex> lock(*q.mutex);
        q.cv->notify_one();
      }
    }
  }

  /** Rank `r`'s communication stream: every aggregation of the phase, in the order the scheduler commits them. */
  void run_committed(int r)
  {
    CommQueue& q = queues_[r];
    for (std::size_t k = 0; k < committed_total(); ++k) {
      if (q.jobs.empty()) {
        std::unique_lock<sg4::Mutex> lock(*q.mutex);
        q.waiting = true;
        q.cv->wait(lock, [&] { return !q.jobs.empty() || k >= committed_total(); });
        q.waiting = false;
        if (q.jobs.empty())
          return; // the iterations repeat: nothing more is committed
      }
      const Job job = q.jobs.front();
      q.jobs.pop_front();
      const double start = sg4::Engine::get_clock();
      note_aggregation(job.it);
      collective_.allreduce(*groups_[0], r, dag_.tasks[job.agg].bytes);
      finish(r, job.it, job.agg, start, sg4::Engine::get_clock());
      if (--*job.remaining == 0) { // every rank holds the result: its credit is free again
        release(job.agg);
        wake_scheduler();
      }
    }
  }

  std::string name_;
  const dag::IterationDag& dag_;
  const collectives::Collective& collective_;
  unsigned iterations_;
  double reference_speed_;
  std::vector<double> gpu_shares_; ///< per rank: share of its GPU an aggregation takes (interference.cpp)
  bool record_transfers_;
  std::set<int> transfer_ranks_;
  bool nominal_ = false; ///< nominal_times(): streams may run ahead
  bool driven_ = false;  ///< drivable(): one actor per communication stream runs every rank's aggregations
  /** The collective's program for the phase's streams (Collective::stream_program), if it has one: its one in-order
   *  stream, its priority policy's, or several in-order streams as lanes (try_lanes_program). */
  std::unique_ptr<collectives::StreamProgram> program_;
  sg4::MutexPtr settle_mutex_ = sg4::Mutex::create();                      ///< settle()'s
  sg4::ConditionVariablePtr settle_cv_ = sg4::ConditionVariable::create(); ///< settle()'s
  const dag::ProgressFn& progress_;
  const dag::AggregationProgressFn& aggregation_progress_;
  std::size_t aggregations_done_ = 0; ///< by rank 0
  collectives::CommWorld world_;
  std::vector<std::unique_ptr<collectives::Group>> groups_; ///< one per InOrder communication stream
  std::vector<RankState> states_;
  /// When each rank's task of each iteration is (or will be) done, kNotYet while unknown: [iteration][task][rank], the
  /// ranks of one task side by side (a driver checks one task's readiness for every rank in turn: at 16,384 GPUs a
  /// cache line per rank when each rank's times were a block of their own, 11.7 % of the ring's run).
  std::vector<double> done_at_;
  std::size_t done_index(int rank, int iteration, int task) const
  {
    return (static_cast<std::size_t>(iteration) * dag_.tasks.size() + static_cast<std::size_t>(task)) * states_.size() +
           static_cast<std::size_t>(rank);
  }
  std::vector<std::size_t> finished_; ///< tasks finished per iteration, all ranks together
  std::vector<double> iteration_end_; ///< latest end of a finished task per iteration
  dag::PhaseResult result_;
  LinkLog links_; ///< after world_: destroyed (its thread joined) before the routes its records point to
  double start_ = 0;

  // Replication (note_barrier(), replicate()).
  enum class Probe { Off, Open, Identical, Different };
  Probe probe_ = Probe::Off;
  int barrier_ = -1;                    ///< dag::iteration_barrier, or -1
  int barrier_ranks_ = 0;               ///< ranks whose iteration 0 barrier task has ended
  double barrier_end_ = 0;              ///< when the first of them did (clock)
  unsigned limit_;                      ///< iterations the streams run
  std::vector<sg4::ActorPtr> services_; ///< the collective's actors

  // Priority policy.
  std::vector<std::vector<int>> priority_dependents_; ///< task -> aggregations that wait for it
  std::vector<int> ready_ranks_;                      ///< [iteration * tasks + aggregation]: ranks where ready
  std::vector<double> ready_time_; ///< [iteration * tasks + aggregation]: latest readiness on those ranks (driven)
  std::priority_queue<std::tuple<double, int, int, int>, std::vector<std::tuple<double, int, int, int>>,
                      std::greater<>>
      pending_heap_; ///< driven: (ready time, iteration, priority, aggregation), ready on every rank from that time
  std::priority_queue<std::tuple<int, int, int>, std::vector<std::tuple<int, int, int>>, std::greater<>>
      ready_heap_;                ///< (iteration, priority, aggregation), ready on every rank, not launched
  std::vector<CommQueue> queues_; ///< per rank
  sg4::ConditionVariablePtr scheduler_cv_;
  sg4::MutexPtr scheduler_mutex_;
  std::uint64_t in_flight_bytes_ = 0; ///< of the admitted aggregations not yet reduced everywhere
};

Phase::Phase(PhaseSpec spec)
    : impl_(std::make_unique<Impl>(std::move(spec)))
{
}

Phase::~Phase() = default;

dag::PhaseResult Phase::run()
{
  return impl_->run();
}

} // namespace ddlsim::engine
