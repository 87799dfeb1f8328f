// Compares two ddlsim JSON reports field by field: numbers to a relative tolerance (and equal below 1e-15), the rest
// exactly; optionally simulated times to an absolute floor as well (and what the iteration time divides by as much).
#include "proto/report.pb.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

namespace gp = google::protobuf;

namespace {

bool load(const char* path, ddlsim::proto::Report& report)
{
  std::ifstream in(path);
  if (!in) {
    std::cerr << path << ": cannot open\n";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto status = gp::util::JsonStringToMessage(ss.str(), &report);
  if (!status.ok()) {
    std::cerr << path << ": " << status.message() << "\n";
    return false;
  }
  return true;
}

/** Below this, two numbers are equal whatever their ratio: a quantity that is a difference of two simulated times of
 *  about a second (an exposed share that is zero) comes out as a few units of their last place, 1e-16 s, in one report
 *  and as 0 in the other. No report field that matters is that small (the smallest are per-byte costs, ~1e-11 s/B,
 *  copied from the input). */
constexpr double kAbsoluteFloor = 1e-15;

bool close_enough(double a, double b, double tol)
{
  return a == b || std::fabs(a - b) <= tol * std::max(std::fabs(a), std::fabs(b)) || std::fabs(a - b) <= kAbsoluteFloor;
}

/** The optional floor for simulated times (seconds; 0: none): two times this close are equal, and quantities that
 *  divide by the iteration time (throughput, speedup, efficiency, a link's utilisation) may differ by as much as that
 *  shift of the iteration gives, relative: floor / iteration time. For two implementations of one network model
 *  whose event times are kept to SimGrid's resolution (surf/precision, 1 ns) differently. */
double g_seconds_floor = 0;
double g_iteration_s = 0;

/** A field that holds a simulated time (seconds): its name ends in "_s" (not "_per_s") or is a link's busy time. */
bool is_time(const std::string& name)
{
  auto ends = [&](const std::string& tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return (ends("_s") && !ends("_per_s")) || name == "busy_s_per_iteration";
}

/** A field that divides by the iteration time. */
bool per_iteration(const std::string& name)
{
  return name == "throughput_samples_per_s" || name == "speedup" || name == "scaling_efficiency" ||
         name == "utilisation";
}

/** The floor for a time field: the whole floor for totals and instants (an iteration, the simulated time, when an
 *  aggregation starts, a link's busy time: sums of many events), a twentieth of it for one aggregation's or one
 *  layer's own duration (a few events). */
double floor_for(const std::string& prefix, const std::string& name)
{
  const bool one = (prefix.rfind("aggregations[", 0) == 0 || prefix.rfind("layers[", 0) == 0) && name != "start_s";
  return one ? g_seconds_floor / 20 : g_seconds_floor;
}

bool close_enough(const std::string& prefix, const std::string& name, double a, double b, double tol)
{
  if (close_enough(a, b, tol))
    return true;
  if (g_seconds_floor <= 0)
    return false;
  if (is_time(name))
    return std::fabs(a - b) <= floor_for(prefix, name);
  if (per_iteration(name) && g_iteration_s > 0)
    return std::fabs(a - b) <= (tol + g_seconds_floor / g_iteration_s) * std::max(std::fabs(a), std::fabs(b));
  return false;
}

int compare(const gp::Message& a, const gp::Message& b, const std::string& prefix, double tol)
{
  int differences = 0;
  const auto* desc = a.GetDescriptor();
  const auto* ra = a.GetReflection();
  const auto* rb = b.GetReflection();
  for (int i = 0; i < desc->field_count(); ++i) {
    const auto* f = desc->field(i);
    const std::string name = prefix + f->name();
    if (name == "simulated_activities" || name == "computed_flows")
      continue; // how much work the simulator did, not what it predicts: every speed-up changes it
    const int n = f->is_repeated() ? ra->FieldSize(a, f) : 1;
    if (f->is_repeated() && n != rb->FieldSize(b, f)) {
      std::cerr << name << ": " << n << " entries vs " << rb->FieldSize(b, f) << "\n";
      ++differences;
      continue;
    }
    for (int k = 0; k < n; ++k) {
      const std::string where = f->is_repeated() ? name + "[" + std::to_string(k) + "]" : name;
      if (f->cpp_type() == gp::FieldDescriptor::CPPTYPE_MESSAGE) {
        differences +=
            compare(f->is_repeated() ? ra->GetRepeatedMessage(a, f, k) : ra->GetMessage(a, f),
                    f->is_repeated() ? rb->GetRepeatedMessage(b, f, k) : rb->GetMessage(b, f), where + ".", tol);
      } else if (f->cpp_type() == gp::FieldDescriptor::CPPTYPE_DOUBLE) {
        const double x = f->is_repeated() ? ra->GetRepeatedDouble(a, f, k) : ra->GetDouble(a, f);
        const double y = f->is_repeated() ? rb->GetRepeatedDouble(b, f, k) : rb->GetDouble(b, f);
        if (!close_enough(prefix, f->name(), x, y, tol)) {
          std::cerr.precision(17);
          std::cerr << where << ": " << x << " vs " << y << " (relative tolerance " << tol;
          if (g_seconds_floor > 0)
            std::cerr << ", times to " << floor_for(prefix, f->name()) << " s";
          std::cerr << ")\n";
          ++differences;
        }
      } else if (prefix.rfind("links[", 0) == 0 && f->cpp_type() == gp::FieldDescriptor::CPPTYPE_STRING) {
        continue; // link names belong to the platform file: the same cluster generated or written by hand differs
      } else {
        std::string x, y;
        gp::TextFormat::PrintFieldValueToString(a, f, f->is_repeated() ? k : -1, &x);
        gp::TextFormat::PrintFieldValueToString(b, f, f->is_repeated() ? k : -1, &y);
        if (x != y) {
          std::cerr << where << ": " << x << " vs " << y << "\n";
          ++differences;
        }
      }
    }
  }
  return differences;
}

} // namespace

int main(int argc, char** argv)
{
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: compare_reports EXPECTED.json ACTUAL.json RELATIVE_TOLERANCE [SECONDS_FLOOR]\n";
    return 2;
  }
  ddlsim::proto::Report expected, actual;
  if (!load(argv[1], expected) || !load(argv[2], actual))
    return 2;
  const double tol = std::stod(argv[3]);
  if (argc == 5) {
    g_seconds_floor = std::stod(argv[4]);
    g_iteration_s = expected.iteration_time_s();
    // Links come busiest first: equally busy ones swap places when their times differ within the floor. Both
    // reports ran one platform (the same names), so they are compared name by name.
    for (auto* r : {&expected, &actual})
      std::stable_sort(r->mutable_links()->begin(), r->mutable_links()->end(),
                       [](const auto& a, const auto& b) { return a.name() < b.name(); });
  }
  const int differences = compare(expected, actual, "", tol);
  if (differences != 0) {
    std::cerr << differences << " field(s) differ between " << argv[1] << " and " << argv[2] << "\n";
    return 1;
  }
  std::cout << "reports agree (relative tolerance " << tol << ")\n";
  return 0;
}
