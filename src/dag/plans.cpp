// How a schedule groups gradients into aggregations and when each may start (docs/schedules.md).
#include "dag/plans.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <limits>

namespace ddlsim::dag {

std::vector<double> LayerTimes::ready_s() const
{
  std::vector<double> ready(bytes.size(), 0.0);
  double t = 0;
  for (int l = last_layer(); l >= 0; --l) {
    t += backward_s[l];
    ready[l] = t;
  }
  return ready;
}

namespace {

/** Layers with a gradient, in the order backward produces them (last layer first). */
std::vector<int> gradient_layers(const LayerTimes& t)
{
  std::vector<int> order;
  for (int l = t.last_layer(); l >= 0; --l)
    if (t.bytes[l] > 0)
      order.push_back(l);
  return order;
}

PlannedAggregation group(const std::vector<int>& members, const LayerTimes& t)
{
  PlannedAggregation a;
  a.layers = members;
  for (int l : members)
    a.bytes += t.bytes[l];
  a.ready_layer = members.back(); // backward order: the last member is ready last
  a.priority = members.back();
  return a;
}

/** One aggregation per gradient; `ready_layer` = `wait_for` when given (sequential: the last backward). */
std::vector<PlannedAggregation> one_per_layer(const LayerTimes& t, int wait_for)
{
  std::vector<PlannedAggregation> plan;
  for (int l : gradient_layers(t)) {
    plan.push_back(group({l}, t));
    if (wait_for >= 0)
      plan.back().ready_layer = wait_for;
  }
  return plan;
}

/** Horovod's tensor fusion: a buffer opens with the first ready gradient; the next ones join it while they fit
 *  in fusion_bytes and are ready within fusion_cycle_s of the first. It is flushed at the end of the cycle, or
 *  as soon as a gradient arrives that does not fit; a gradient larger than the buffer goes alone. */
std::vector<PlannedAggregation> fusion(const LayerTimes& t, const ScheduleOptions& o)
{
  const auto ready = t.ready_s();
  std::vector<PlannedAggregation> plan;
  std::vector<int> buffer;
  std::uint64_t bytes = 0;
  auto flush_on_timer = [&] {
    if (buffer.empty())
      return;
    plan.push_back(group(buffer, t));
    plan.back().timer_s = o.fusion_cycle_s;
    plan.back().timer_layer = buffer.front();
    buffer.clear();
    bytes = 0;
  };
  for (int l : gradient_layers(t)) {
    if (!buffer.empty() && ready[l] > ready[buffer.front()] + o.fusion_cycle_s)
      flush_on_timer(); // the cycle ended before this gradient
    if (!buffer.empty() && bytes + t.bytes[l] > o.fusion_bytes) {
      plan.push_back(group(buffer, t)); // full: flushed when this gradient arrives
      plan.back().ready_layer = l;
      buffer.clear();
      bytes = 0;
    }
    if (t.bytes[l] > o.fusion_bytes) {
      plan.push_back(group({l}, t)); // too large for the buffer: alone, at once
      continue;
    }
    buffer.push_back(l);
    bytes += t.bytes[l];
  }
  flush_on_timer();
  return plan;
}

/** PyTorch DDP's buckets: filled in backward order, a bucket is closed once it holds at least its cap (the first
 *  bucket's cap is first_bucket_bytes, the others' bucket_bytes); reduced once all its gradients exist. */
std::vector<PlannedAggregation> buckets(const LayerTimes& t, const ScheduleOptions& o)
{
  std::vector<PlannedAggregation> plan;
  std::vector<int> bucket;
  std::uint64_t bytes = 0;
  for (int l : gradient_layers(t)) {
    bucket.push_back(l);
    bytes += t.bytes[l];
    if (bytes >= (plan.empty() ? o.first_bucket_bytes : o.bucket_bytes)) {
      plan.push_back(group(bucket, t));
      bucket.clear();
      bytes = 0;
    }
  }
  if (!bucket.empty())
    plan.push_back(group(bucket, t));
  return plan;
}

/** MG-WFBP's problem, solved exactly: consecutive gradients (backward order) are merged into groups so that the
 *  last aggregation ends as early as possible when aggregations run one at a time, each starting when its last
 *  gradient exists and the previous one has ended, and taking aggregation_cost_s(bytes). Dynamic programming over
 *  the gradient prefixes: the end of the best plan for the first j gradients is
 *  F(j) = min over i <= j of max(ready(g_j), F(i - 1)) + cost(bytes(g_i..g_j)), which is optimal because an
 *  aggregation's end grows with its start (an earlier previous end never hurts). A group whose start plus
 *  aggregation_floor_s (a lower bound of the cost) is not below the best end so far is skipped uncosted. */
std::vector<PlannedAggregation> mgwfbp(const LayerTimes& t, const ScheduleOptions& o)
{
  if (!o.aggregation_cost_s)
    throw Error("internal: mgwfbp needs the closed-form cost of an aggregation");
  const auto ready = t.ready_s();
  const auto order = gradient_layers(t);
  const std::size_t n = order.size();
  std::vector<double> best(n + 1, 0.0);
  std::vector<std::size_t> first(n + 1, 0);
  for (std::size_t j = 1; j <= n; ++j) {
    best[j] = std::numeric_limits<double>::infinity();
    std::uint64_t bytes = 0;
    for (std::size_t i = j; i >= 1; --i) { // group g_i..g_j; ties keep the smaller group
      bytes += t.bytes[order[i - 1]];
      const double start = std::max(ready[order[j - 1]], best[i - 1]);
      if (o.aggregation_floor_s && start + o.aggregation_floor_s(bytes) >= best[j])
        continue; // its end is at least best[j]: it cannot win
      const double end = start + o.aggregation_cost_s(bytes);
      if (end < best[j]) {
        best[j] = end;
        first[j] = i;
      }
    }
  }
  std::vector<PlannedAggregation> plan;
  for (std::size_t j = n; j >= 1; j = first[j] - 1) {
    const std::vector<int> members(order.begin() + static_cast<long>(first[j] - 1),
                                   order.begin() + static_cast<long>(j));
    plan.push_back(group(members, t));
  }
  std::reverse(plan.begin(), plan.end());
  return plan;
}

/** ByteScheduler: every gradient cut into partitions of at most partition_bytes (nearly equal parts), each
 *  prioritised by its layer (front layers first). */
std::vector<PlannedAggregation> priority(const LayerTimes& t, const ScheduleOptions& o)
{
  std::vector<PlannedAggregation> plan;
  for (int l : gradient_layers(t)) {
    const std::uint64_t parts = (t.bytes[l] + o.partition_bytes - 1) / o.partition_bytes;
    for (std::uint64_t k = 0; k < parts; ++k) {
      plan.push_back(group({l}, t));
      plan.back().bytes = t.bytes[l] / parts + (k < t.bytes[l] % parts ? 1 : 0);
    }
  }
  return plan;
}

std::vector<PlannedAggregation> sequential(const LayerTimes& t, const ScheduleOptions&)
{
  return one_per_layer(t, 0);
}

std::vector<PlannedAggregation> wfbp(const LayerTimes& t, const ScheduleOptions&)
{
  return one_per_layer(t, -1);
}

} // namespace

const std::vector<ScheduleEntry>& schedule_table()
{
  static const std::vector<ScheduleEntry> table = {
      {Schedule::Sequential, "sequential", "backward, then every aggregation",
       "no overlap: the baseline of Shi et al., ICPADS 2018", kKnobStreams, false, CommPolicy::InOrder, sequential},
      {Schedule::Wfbp, "wfbp", "aggregate each layer as soon as its gradient is ready",
       "wait-free backpropagation (Zhang et al., Poseidon, USENIX ATC 2017)", kKnobStreams, false, CommPolicy::InOrder,
       wfbp},
      {Schedule::Fusion, "fusion",
       "ready gradients share a buffer of --fusion-bytes, flushed when full or --fusion-cycle after its first",
       "Horovod tensor fusion (docs/tensor-fusion.rst; defaults of horovod/common/operations.cc since v0.21.0)",
       kKnobFusion | kKnobStreams, false, CommPolicy::InOrder, fusion},
      {Schedule::Buckets, "buckets",
       "static buckets of --bucket-bytes in reverse layer order, each reduced once all its gradients exist",
       "PyTorch DistributedDataParallel (bucket_cap_mb = 25; first bucket 1 MiB; Li et al., VLDB 2020)",
       kKnobBuckets | kKnobStreams, false, CommPolicy::InOrder, buckets},
      {Schedule::Mgwfbp, "mgwfbp",
       "merge consecutive gradients where the closed-form cost says it shortens the iteration",
       "MG-WFBP (Shi, Chu, Li, INFOCOM 2019), its merge problem solved exactly", kKnobStreams, false,
       CommPolicy::InOrder, mgwfbp},
      {Schedule::Priority, "priority",
       "partitions of --partition-bytes, front layers first, at most --credit-bytes in flight",
       "ByteScheduler (Peng et al., SOSP 2019; defaults of bytescheduler/common/bytecore.py)", kKnobPartition, true,
       CommPolicy::Priority, priority},
  };
  return table;
}

const ScheduleEntry& schedule_entry(Schedule id)
{
  for (const auto& e : schedule_table())
    if (e.id == id)
      return e;
  throw Error("internal: schedule without a table row");
}

std::vector<PlannedAggregation> plan_aggregations(const LayerTimes& t, const ScheduleOptions& o)
{
  return schedule_entry(o.schedule).plan(t, o);
}

} // namespace ddlsim::dag
