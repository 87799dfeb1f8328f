// Writers of a Report: the console table and JSON.
#include "report/writers.hpp"

#include "common/error.hpp"
#include "common/json.hpp"
#include "common/strings.hpp"
#include "report/summary.hpp"

#include <cstdio>
#include <fstream>

namespace ddlsim::report {
namespace {

std::string fmt(const char* format, double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void row(std::ostream& out, const std::string& label, const std::string& value)
{
  // The label padded to 34 columns, the value whole however long (a size switch's fidelity names every side).
  out << "  " << label << std::string(label.size() < 34 ? 34 - label.size() : 0, ' ') << ' ' << value << '\n';
}

void share(std::ostream& out, const std::string& label, double seconds, double total)
{
  char buf[160];
  std::snprintf(buf, sizeof buf, "    %-32s %14s  %5.1f %%\n", label.c_str(), format_seconds(seconds).c_str(),
                total > 0 ? 100.0 * seconds / total : 0.0);
  out << buf;
}

} // namespace

void write_console(std::ostream& out, const proto::Report& r)
{
  const auto& c = r.config();
  const auto& b = r.breakdown();
  out << "ddlsim: " << r.model() << " on " << r.gpus() << " x " << r.gpu() << " (" << c.platform_file() << "), "
      << c.algorithm() << " allreduce, schedule " << c.schedule() << ", " << c.iterations() << " iteration"
      << (c.iterations() == 1 ? "" : "s") << "\n\n";
  const unsigned first = c.iterations() - r.measured_iterations() + 1; // 1-based
  const std::string measured = r.measured_iterations() > 1 ? "mean of iterations " + std::to_string(first) + ".." +
                                                                 std::to_string(c.iterations())
                               : c.iterations() == 1 ? std::string("the only iteration")
                                                     : "iteration " + std::to_string(first);
  row(out, "GPUs", std::to_string(r.gpus()));
  row(out, "batch per GPU", std::to_string(r.batch_size_per_gpu()) + " samples");
  row(out, "iteration time", format_seconds(r.iteration_time_s()) + "  (" + measured + ")");
  if (r.iterations_simulated() > 0 && r.iterations_simulated() < c.iterations())
    row(out, "iterations simulated",
        std::to_string(r.iterations_simulated()) + " of " + std::to_string(c.iterations()) +
            " (the others repeat it: every GPU ended it at one instant)");
  if (r.measured_iterations() > 1 && r.iteration_time_max_s() - r.iteration_time_min_s() > 1e-9 * r.iteration_time_s())
    row(out, "  spread of the measured iterations",
        "std " + format_seconds(r.iteration_time_std_s()) + ", min " + format_seconds(r.iteration_time_min_s()) +
            ", max " + format_seconds(r.iteration_time_max_s()));
  if (r.analytical_iteration_time_s() > 0)
    row(out, "closed-form critical path",
        format_seconds(r.analytical_iteration_time_s()) +
            "  (simulated - closed form: " + format_seconds(r.iteration_time_s() - r.analytical_iteration_time_s()) +
            ", " + fmt("%+.3f %%", 100.0 * (r.iteration_time_s() / r.analytical_iteration_time_s() - 1)) +
            ": contention the closed form leaves out)");
  const std::string na = "n/a (no computation: the single GPU takes no time)";
  row(out, "throughput", r.iteration_time_s() > 0 ? fmt("%.1f samples/s", r.throughput_samples_per_s()) : na);
  row(out, "single-GPU iteration time",
      format_seconds(r.single_gpu_iteration_time_s()) + "  (simulated on " +
          (c.hosts_size() > 0 ? c.hosts(0) : std::string("rank 0")) + ")");
  const bool timed = r.iteration_time_s() > 0 && r.single_gpu_iteration_time_s() > 0;
  row(out, "single-GPU throughput",
      r.single_gpu_iteration_time_s() > 0 ? fmt("%.1f samples/s", r.single_gpu_throughput_samples_per_s()) : na);
  row(out, "speedup", timed ? fmt("%.3f x", r.speedup()) : na);
  row(out, "scaling efficiency", timed ? fmt("%.1f %%", 100.0 * r.scaling_efficiency()) : na);
  out << "\n  where one iteration's time goes (mean over GPUs)      time   share\n";
  const double t = r.iteration_time_s();
  const bool prefetched = c.schedule_config().io_prefetch() > 0;
  if (prefetched) {
    share(out, "input not hidden by prefetch", b.exposed_input_s(), t);
  } else {
    share(out, "data loading (I/O)", b.io_s(), t);
    share(out, "host-to-device copy", b.h2d_s(), t);
  }
  share(out, "forward", b.forward_s(), t);
  share(out, "backward", b.backward_s(), t);
  share(out, "update", b.update_s(), t);
  share(out, "communication not hidden", b.exposed_communication_s(), t);
  share(out, "= iteration time", t, t);
  out << "\n";
  if (prefetched)
    row(out, "input, prefetched",
        format_seconds(b.io_s()) + " loading + " + format_seconds(b.h2d_s()) + " copy per iteration, " +
            std::to_string(c.schedule_config().io_prefetch()) + " batch(es) ahead on their own stream");
  // How the aggregations were simulated (docs/collectives.md, Fidelity); ddlsim run always sets it.
  row(out, "aggregation fidelity", c.aggregation().fidelity_used());
  row(out, "communication, total",
      format_seconds(b.communication_s()) + "  (" +
          fmt("%.1f %%",
              b.communication_s() > 0 ? 100.0 * (1.0 - b.exposed_communication_s() / b.communication_s()) : 0.0) +
          " hidden behind computation)");
  row(out, "gradient per iteration",
      format_bytes(double(r.gradient_bytes())) + " (" + std::to_string(r.gradient_bytes()) + " B) in " +
          std::to_string(r.aggregations_per_iteration()) + " allreduces");
  row(out, "bytes sent per iteration, all GPUs", format_bytes(double(r.bytes_sent_per_iteration())));
  // The busiest kind of link: the class of the most used link.
  if (const proto::LinkRecord* top = most_used_link(r)) {
    int count = 0;
    for (const auto& l : r.links())
      count += l.link_class() == top->link_class() ? 1 : 0;
    row(out, "busiest link class",
        top->link_class() + " (" + std::to_string(count) + " link" + (count == 1 ? "" : "s") +
            "): " + fmt("%.1f %%", 100 * top->utilisation()) + " utilised, busy " +
            fmt("%.1f %%", t > 0 ? 100 * top->busy_s_per_iteration() / t : 0.0) + " of the iteration");
  }
  row(out, "simulated time (multi-GPU phase)", format_seconds(r.simulated_time_s()));
}

} // namespace ddlsim::report
