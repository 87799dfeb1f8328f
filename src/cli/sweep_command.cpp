// `ddlsim sweep`: run a grid of `run` (or `collective`) points in child processes, one CSV row per finished run.
#include "cli/child_process.hpp"
#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/sweep_grid.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/strings.hpp"
#include "proto/report.pb.h"
#include "workload/roofline.hpp"
#include "workload/workload.hpp"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ddlsim::cli {
namespace {

const char* const kSweepUsage =
    R"(Usage: ddlsim sweep RUN-OPTIONS --csv FILE|- [--jobs J] [-q]
       ddlsim sweep --collective COLLECTIVE-OPTIONS --csv FILE|- [--jobs J] [-q]
       ddlsim sweep RUN-OPTIONS --slurm DIR [--chunk N] [--submit]
       ddlsim sweep --collect DIR --csv FILE|-

Runs every combination of the listed option values and appends one CSV row per finished run (with
--collective: one row per message size of each finished run) as it finishes. Every option of
'ddlsim run' (of 'ddlsim collective' with --collective) may list values:

  --ranks 4,8,16  --schedule wfbp|fusion  --algorithm ring --algorithm hier   (',' or '|' or repeated)
  --algorithm 'rd<=8KiB,hd|ring'   --hosts, --ps-hosts: their values hold commas, so only '|' or repeating
  --cluster 'nodes=2|4,gpus-per-node=4,gpu=P40,intra=pcie,inter=10gbe|ib56'   ('|' inside a key's value)
  --model resnet50,alexnet --gpu P40 --batch 32,64 --precision fp32   (instead of --workload: the
                                       workload is generated as 'ddlsim workload' does)

Switches (--analytical) and every --cfg apply to every point. The CSV has a column per listed key (with
more than one value), then gpus, the iteration time, throughput, speedup, scaling efficiency and the
breakdown, units in the names. An existing CSV with the same columns is resumed: its points are skipped
(an interrupted sweep keeps every finished row; each row is flushed and fsync'ed, the file is appended to,
never renamed). A failed point is one line (its key, exit code and error) in FILE.errors, and the sweep
exits 3 when any failed. Each point runs in its own process (SimGrid allows one engine per process).

Options:
  --csv FILE         the results ('-': standard output; no resume then)
  --jobs J           simulations at once (default 1)
  -q, --quiet        no progress on stderr
  --collective       points are 'ddlsim collective' runs
  --slurm DIR        write DIR/sweep.sbatch, a Slurm job array: each task runs --chunk points into
                     DIR/part-TASK.csv; merge with --collect DIR
  --chunk N          points per array task (default: enough for at most 1000 tasks)
  --submit           with --slurm: also submit it with sbatch
  --collect DIR      merge DIR/part-*.csv (the tasks of --slurm DIR) into --csv
  --task I           run only chunk I of the grid (what each array task does)
  -h, --help         show this help
)";

/** Column names after the keys: one per number read from a run's report. */
const std::vector<std::string>& run_metric_columns()
{
  static const std::vector<std::string> columns = {"gpus",
                                                   "iteration_time_s",
                                                   "throughput_samples_per_s",
                                                   "speedup_x",
                                                   "scaling_efficiency_fraction",
                                                   "single_gpu_iteration_time_s",
                                                   "io_s",
                                                   "h2d_s",
                                                   "forward_s",
                                                   "backward_s",
                                                   "update_s",
                                                   "exposed_input_s",
                                                   "exposed_communication_s",
                                                   "communication_s"};
  return columns;
}

std::vector<std::string> run_metrics(const proto::Report& r)
{
  const auto& b = r.breakdown();
  std::vector<std::string> v;
  for (double x : {r.iteration_time_s(), r.throughput_samples_per_s(), r.speedup(), r.scaling_efficiency(),
                   r.single_gpu_iteration_time_s(), b.io_s(), b.h2d_s(), b.forward_s(), b.backward_s(), b.update_s(),
                   b.exposed_input_s(), b.exposed_communication_s(), b.communication_s()})
    v.push_back(format_double(x));
  v.insert(v.begin(), std::to_string(r.gpus()));
  return v;
}

/** The columns `ddlsim collective --csv` writes (with --compare: the measurement too). */
std::vector<std::string> collective_columns(bool compare)
{
  std::vector<std::string> c = {"bytes", "time_us", "algbw_GBps", "busbw_GBps", "closed_form_us"};
  if (compare)
    c.insert(c.end(), {"measured_us", "relative_error"});
  return c;
}

// --- CSV ------------------------------------------------------------------------------------------------------------

std::string csv_field(const std::string& v)
{
  if (v.find_first_of(",\"\n\r") == std::string::npos)
    return v;
  std::string q = "\"";
  for (char c : v)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_line(const std::vector<std::string>& fields)
{
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i)
    line += (i ? "," : "") + csv_field(fields[i]);
  return line + "\n";
}

/** Splits one CSV line (RFC 4180 quotes); false when a quote is not closed. */
bool parse_csv_line(const std::string& line, std::vector<std::string>& fields)
{
  fields.assign(1, "");
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        fields.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        fields.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return !quoted;
}

/** A CSV file: its header and complete rows; `complete_bytes` is where the last complete line ends (an interrupted
 *  write may leave a partial last line, which is dropped). */
struct CsvFile {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t complete_bytes = 0;
};

CsvFile read_csv(const std::string& path)
{
  const std::string text = read_file(path);
  CsvFile f;
  std::size_t pos = 0;
  int number = 0;
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos)
      break; // partial last line: not a finished row
    const std::string line = text.substr(pos, nl - pos);
    ++number;
    std::vector<std::string> fields;
    if (!parse_csv_line(line, fields))
      throw InputError(path + ": line " + std::to_string(number) + ": unclosed quote");
    if (number == 1)
      f.header = fields;
    else if (fields.size() != f.header.size())
      throw InputError(path + ": line " + std::to_string(number) + ": " + std::to_string(fields.size()) +
                       " fields, the header has " + std::to_string(f.header.size()));
    else
      f.rows.push_back(fields);
    pos = nl + 1;
    f.complete_bytes = pos;
  }
  return f;
}

/** Appends rows to the sweep's CSV, each written whole, flushed and fsync'ed: a killed sweep keeps every finished
 *  row. Not written through write_output_file (a temporary renamed over the target): the file grows as runs finish,
 *  and renaming after every row would rewrite it each time. */
class CsvAppender {
public:
  CsvAppender(const std::string& path, std::ostream& out)
      : path_(path)
      , out_(out)
  {
  }
  ~CsvAppender()
  {
    if (fd_ >= 0)
      ::close(fd_);
  }
  CsvAppender(const CsvAppender&) = delete;
  CsvAppender& operator=(const CsvAppender&) = delete;

  /** Opens the file, cut to `keep_bytes` (its complete lines), for appending. */
  void open(std::size_t keep_bytes)
  {
    if (path_ == "-")
      return;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd_ < 0 || ::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0)
      throw WriteError("--csv " + path_ + ": cannot open for appending (" + std::strerror(errno) + ")");
  }

  void append(const std::string& text)
  {
    if (path_ == "-") {
      out_ << text << std::flush;
      return;
    }
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        throw WriteError("--csv " + path_ + ": write failed (" + std::strerror(errno) + ")");
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd_) != 0)
      throw WriteError("--csv " + path_ + ": fsync failed (" + std::strerror(errno) + ")");
  }

private:
  std::string path_;
  std::ostream& out_;
  int fd_ = -1;
};

// --- child processes ------------------------------------------------------------------------------------------------

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int signal)
{
  g_interrupted = signal;
}

extern "C" void on_tick(int) {} // SIGALRM once a second: waitpid returns, the progress line is redrawn

/** The last non-empty line a child wrote on stderr ("ddlsim: error: " removed). */
std::string last_error_line(const std::string& err_path)
{
  std::string text;
  try {
    text = read_file(err_path);
  } catch (const Error&) {
    return "(no message)";
  }
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty())
      last = line;
  const std::string prefix = "ddlsim: error: ";
  if (last.rfind(prefix, 0) == 0)
    last = last.substr(prefix.size());
  return last.empty() ? "(no message)" : last;
}

/** A temporary directory for the children's reports and generated workloads, removed with the object. */
class TempDir {
public:
  TempDir()
  {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/ddlsim-sweep-XXXXXX";
    if (!::mkdtemp(templ.data()))
      throw WriteError("sweep: cannot create a temporary directory in " + templ + " (" + std::strerror(errno) + ")");
    path_ = templ;
  }
  ~TempDir()
  {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

// --- progress -------------------------------------------------------------------------------------------------------

/** One redrawn line on a terminal; plain lines at most every 5 s otherwise; nothing with -q. */
class SweepProgress {
public:
  SweepProgress(std::ostream& err, bool quiet, std::size_t total, std::size_t skipped)
      : err_(err)
      , quiet_(quiet)
      , tty_(::isatty(STDERR_FILENO) == 1)
      , total_(total)
      , skipped_(skipped)
  {
  }

  /** Redraws (or, not on a terminal, prints at most every 5 s unless `force`); `final_line` ends the line. */
  void update(std::size_t done, std::size_t failed, bool force = false, bool final_line = false)
  {
    if (quiet_)
      return;
    const double now = wall_s();
    if (!force && !tty_ && now - last_print_ < 5.0)
      return;
    last_print_ = now;
    const std::size_t finished = done + failed;
    const std::size_t todo = total_ - skipped_;
    char eta[64] = "";
    if (finished > 0 && finished < todo)
      std::snprintf(eta, sizeof eta, ", about %s left",
                    format_seconds(now / double(finished) * double(todo - finished)).c_str());
    char line[256];
    std::snprintf(line, sizeof line, "%zu/%zu runs done, %zu failed%s, elapsed %s%s", finished + skipped_, total_,
                  failed, skipped_ ? (", " + std::to_string(skipped_) + " from the CSV").c_str() : "",
                  format_seconds(now).c_str(), eta);
    if (tty_) {
      constexpr int kWidth = 24;
      const int filled = todo ? int(kWidth * double(finished) / double(todo)) : kWidth;
      err_ << "\r[" << std::string(std::size_t(filled), '#') << std::string(std::size_t(kWidth - filled), '.') << "] "
           << line << "\x1b[K" << (final_line ? "\n" : "") << std::flush;
    } else {
      err_ << "ddlsim: sweep: " << line << "\n" << std::flush;
    }
  }
  /** The empty bar, on a terminal only (elsewhere the first line comes after the first runs). */
  void start()
  {
    if (tty_)
      update(0, 0, true);
  }
  double wall_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

private:
  std::ostream& err_;
  bool quiet_;
  bool tty_;
  std::size_t total_;
  std::size_t skipped_;
  double last_print_ = -1e9;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// --- the sweep ------------------------------------------------------------------------------------------------------

std::vector<std::string> sweep_header(const SweepSpec& spec)
{
  std::vector<std::string> header = swept_columns(spec);
  const bool compare =
      std::any_of(spec.axes.begin(), spec.axes.end(), [](const SweepAxis& a) { return a.key == "compare"; });
  const auto metrics = spec.collective ? collective_columns(compare) : run_metric_columns();
  header.insert(header.end(), metrics.begin(), metrics.end());
  return header;
}

/** The workload files of the generated points, written once per distinct (model, gpu, batch, precision). */
std::map<std::string, std::string> generate_workloads(const std::vector<SweepPoint>& points, const std::string& dir)
{
  std::map<std::string, std::string> files;
  for (const auto& p : points) {
    if (p.generation.empty() || files.count(p.generation_id))
      continue;
    workload::GenerateRequest request; // as 'ddlsim workload --model --gpu --batch --precision' builds it
    request.model = p.generation[0];
    request.gpu = p.generation[1];
    const auto batch = parse_positive_int(p.generation[2], "--batch");
    if (batch > 1000000)
      throw ConfigError("--batch must be at most 1000000 (got " + p.generation[2] + ")");
    request.batch = static_cast<unsigned>(batch);
    request.precision = workload::parse_precision(p.generation[3], "--precision");
    const std::string file = dir + "/workload-" + std::to_string(files.size()) + ".textproto";
    write_output_file(file, workload::to_textproto(workload::generate_workload(request)));
    files[p.generation_id] = file;
  }
  return files;
}

/** One child's outcome as CSV rows (swept key first), or its failure. */
struct Outcome {
  bool ok = false;
  std::vector<std::vector<std::string>> rows;
  std::string error;
};

Outcome read_outcome(const SweepSpec& spec, const SweepPoint& p, int status, const std::string& result_path,
                     const std::string& err_path)
{
  Outcome o;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                              : "signal " + std::to_string(WTERMSIG(status));
    o.error = how + ": " + last_error_line(err_path);
    return o;
  }
  try {
    if (spec.collective) {
      const CsvFile csv = read_csv(result_path);
      if (csv.header != collective_columns(csv.header.size() > 5))
        throw InputError(result_path + ": unexpected columns " + join(csv.header, ","));
      for (const auto& row : csv.rows) {
        std::vector<std::string> r = p.key;
        r.insert(r.end(), row.begin(), row.end());
        o.rows.push_back(r);
      }
    } else {
      proto::Report report;
      const auto status_json = google::protobuf::util::JsonStringToMessage(read_file(result_path), &report);
      if (!status_json.ok())
        throw InputError(result_path + ": not a ddlsim report (" + status_json.ToString() + ")");
      std::vector<std::string> r = p.key;
      const auto m = run_metrics(report);
      r.insert(r.end(), m.begin(), m.end());
      o.rows.push_back(r);
    }
    o.ok = true;
  } catch (const Error& e) {
    o.error = std::string("exit 0 but its result cannot be read: ") + e.what();
  }
  return o;
}

std::string key_text(const SweepSpec& spec, const std::vector<std::string>& key)
{
  const auto columns = swept_columns(spec);
  std::string text;
  for (std::size_t i = 0; i < key.size(); ++i)
    text += (i ? " " : "") + columns[i] + "=" + key[i];
  return text.empty() ? "(the only point)" : text;
}

/** The points of chunk `task` (contiguous, `chunk` points each). */
std::vector<SweepPoint> task_points(std::vector<SweepPoint> points, std::size_t chunk, long task)
{
  const std::size_t first = static_cast<std::size_t>(task) * chunk;
  if (first >= points.size())
    throw ConfigError("--task " + std::to_string(task) + ": the grid has " + std::to_string(points.size()) +
                      " points, " + std::to_string((points.size() + chunk - 1) / chunk) + " tasks of " +
                      std::to_string(chunk));
  const std::size_t last = std::min(points.size(), first + chunk);
  return std::vector<SweepPoint>(points.begin() + long(first), points.begin() + long(last));
}

std::size_t default_chunk(std::size_t points)
{
  constexpr std::size_t kMaxTasks = 1000; // below Slurm's default MaxArraySize (1001)
  return std::max<std::size_t>(1, (points + kMaxTasks - 1) / kMaxTasks);
}

void run_sweep(const SweepSpec& spec, std::ostream& out, std::ostream& err)
{
  if (spec.csv.empty())
    throw ConfigError("sweep: --csv FILE is required ('-' for standard output)");
  if (spec.submit)
    throw ConfigError("sweep: --submit needs --slurm DIR");
  if (spec.chunk && spec.task < 0)
    throw ConfigError("sweep: --chunk needs --slurm DIR or --task I");
  if (spec.csv != "-")
    check_outputs({{"--csv", spec.csv}}, {});
  std::vector<SweepPoint> points = expand_grid(spec);
  const std::size_t grid = points.size();
  if (spec.task >= 0)
    points = task_points(std::move(points), spec.chunk ? spec.chunk : default_chunk(grid), spec.task);

  const std::vector<std::string> header = sweep_header(spec);
  std::size_t keep_bytes = 0;
  std::set<std::vector<std::string>> done_keys;
  const std::size_t keys = swept_columns(spec).size();
  if (spec.csv != "-" && std::filesystem::exists(spec.csv) && std::filesystem::file_size(spec.csv) > 0) {
    const CsvFile existing = read_csv(spec.csv);
    if (!existing.header.empty() && existing.header != header)
      throw ConfigError("--csv " + spec.csv + ": has the columns " + join(existing.header, ",") +
                        ", this sweep writes " + join(header, ",") + " (choose another file to start a new sweep)");
    keep_bytes = existing.complete_bytes;
    for (const auto& row : existing.rows)
      done_keys.insert(std::vector<std::string>(row.begin(), row.begin() + long(keys)));
  }
  std::vector<SweepPoint> todo;
  for (auto& p : points)
    if (!done_keys.count(p.key))
      todo.push_back(std::move(p));
  const std::size_t skipped = points.size() - todo.size();

  TempDir tmp;
  const auto workloads = generate_workloads(todo, tmp.path());
  CsvAppender csv(spec.csv, out);
  csv.open(keep_bytes);
  if (keep_bytes == 0)
    csv.append(csv_line(header));
  const std::string errors_path = spec.csv == "-" ? std::string() : spec.csv + ".errors";
  std::unique_ptr<CsvAppender> errors;
  if (!errors_path.empty()) {
    std::error_code ec;
    std::filesystem::remove(errors_path, ec); // this sweep's failures only
  }

  struct Running {
    std::size_t point;
    std::string result, err;
  };
  std::map<pid_t, Running> running;
  const std::string exe = self_exe();
  SweepProgress progress(err, spec.quiet, points.size(), skipped);
  std::size_t next = 0, done = 0, failed = 0;
  std::string first_failure;
  g_interrupted = 0;
  struct sigaction action {};
  action.sa_handler = on_interrupt; // no SA_RESTART: waitpid returns on a signal
  struct sigaction old_int {
  }, old_term{}, old_alarm{};
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);
  struct sigaction tick {};
  tick.sa_handler = on_tick;
  ::sigaction(SIGALRM, &tick, &old_alarm);
  struct itimerval second {};
  second.it_interval.tv_sec = second.it_value.tv_sec = 1;
  if (!spec.quiet) // a long run (45 s at 1,024 GPUs) is not silent: elapsed time goes on
    ::setitimer(ITIMER_REAL, &second, nullptr);
  progress.start();
  while ((next < todo.size() && !g_interrupted) || !running.empty()) {
    while (!g_interrupted && next < todo.size() && running.size() < std::size_t(spec.jobs)) {
      const SweepPoint& p = todo[next];
      const std::string base = tmp.path() + "/point-" + std::to_string(p.index);
      std::vector<std::string> argv = {exe, spec.collective ? "collective" : "run"};
      argv.insert(argv.end(), p.args.begin(), p.args.end());
      if (!p.generation.empty())
        argv.insert(argv.end(), {"--workload", workloads.at(p.generation_id)});
      const std::string result = base + (spec.collective ? ".csv" : ".json");
      argv.insert(argv.end(), {"-q", spec.collective ? "--csv" : "--report", result});
      running[spawn(argv, base + ".err")] = {next, result, base + ".err"};
      ++next;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR && !g_interrupted) {
        progress.update(done, failed);
        continue;
      }
      if (errno == EINTR) {
        for (const auto& r : running) // stop the runs in flight; their points stay to do
          ::kill(r.first, SIGTERM);
        continue;
      }
      throw Error(std::string("sweep: waitpid: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end())
      continue;
    const Running r = it->second;
    running.erase(it);
    if (g_interrupted)
      continue; // a run stopped by the interrupt is neither a row nor a failure
    const SweepPoint& p = todo[r.point];
    const Outcome o = read_outcome(spec, p, status, r.result, r.err);
    if (o.ok) {
      std::string text;
      for (const auto& row : o.rows)
        text += csv_line(row);
      csv.append(text);
      ++done;
    } else {
      ++failed;
      const std::string line = key_text(spec, p.key) + ": " + o.error;
      if (first_failure.empty())
        first_failure = line;
      if (!errors_path.empty()) {
        if (!errors) {
          errors = std::make_unique<CsvAppender>(errors_path, out);
          errors->open(0);
        }
        errors->append(line + "\n");
      } else if (!spec.quiet) {
        err << (::isatty(STDERR_FILENO) ? "\r\x1b[K" : "") << "ddlsim: sweep: failed: " << line << "\n";
      }
    }
    std::remove(r.result.c_str());
    std::remove(r.err.c_str());
    progress.update(done, failed);
  }
  const struct itimerval off {
  };
  ::setitimer(ITIMER_REAL, &off, nullptr);
  ::sigaction(SIGALRM, &old_alarm, nullptr);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  progress.update(done, failed, true, true);
  if (g_interrupted)
    throw Error("sweep interrupted: " + std::to_string(skipped + done) + " of " + std::to_string(points.size()) +
                " points are in " + spec.csv + "; rerun the same command to run the rest");
  if (failed)
    throw Error("sweep: " + std::to_string(failed) + " of " + std::to_string(todo.size()) + " runs failed (" +
                (errors_path.empty() ? std::string("first: ") + first_failure : "see " + errors_path) + ")");
}

// --- Slurm ----------------------------------------------------------------------------------------------------------

std::string shell_quote(const std::string& s)
{
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/** Runs `argv` (searched on PATH), returns its standard output; Error with its last stderr line when it fails. */
std::string run_capture(const std::vector<std::string>& argv, const std::string& dir)
{
  const std::string out_path = dir + "/.sbatch.out", err_path = dir + "/.sbatch.err";
  std::vector<char*> c_argv = c_args(argv);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw Error(std::string("sweep: fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    ::execvp(c_argv[0], c_argv.data());
    std::fprintf(stderr, "%s: %s\n", c_argv[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string output = readable_file(out_path) ? read_file(out_path) : "";
  const std::string message = last_error_line(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw ConfigError("sweep --submit: cannot run " + argv[0] + " (" + message + "; is Slurm installed?)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("sweep --submit: " + argv[0] + " failed: " + message);
  return output;
}

void write_slurm(const SweepSpec& spec, std::ostream& out)
{
  if (!spec.csv.empty())
    throw ConfigError("sweep: --slurm writes one CSV per array task into its directory; merge them with --collect "
                      "DIR --csv FILE");
  if (spec.task >= 0)
    throw ConfigError("sweep: --task is what each array task of --slurm runs; give one or the other");
  const std::size_t points = expand_grid(spec).size(); // the grid is checked here, not in each task
  const std::size_t chunk = spec.chunk ? spec.chunk : default_chunk(points);
  const std::size_t tasks = (points + chunk - 1) / chunk;
  std::error_code ec;
  const auto dir = std::filesystem::absolute(spec.slurm_dir, ec).lexically_normal();
  if (!std::filesystem::is_directory(dir) && !std::filesystem::create_directory(dir, ec))
    throw WriteError("--slurm " + spec.slurm_dir + ": cannot create the directory (" + ec.message() + ")");
  const std::string d = dir.string();
  std::ostringstream script;
  script << "#!/bin/bash\n# ddlsim sweep as a Slurm job array: " << points << " points, " << tasks
         << " tasks of at most " << chunk << ".\n# Merge the results: ddlsim sweep --collect " << shell_quote(d)
         << " --csv FILE\n"
         << "#SBATCH --job-name=ddlsim-sweep\n#SBATCH --array=0-" << tasks - 1 << "\n#SBATCH --output=" << d
         << "/task-%a.log\n#SBATCH --chdir=" << std::filesystem::current_path().string() << "\n"
         << "exec " << shell_quote(self_exe()) << " sweep";
  if (spec.collective)
    script << " --collective";
  for (const auto& w : spec.forwarded)
    script << " " << shell_quote(w);
  script << " --jobs " << spec.jobs << " --chunk " << chunk << " --task \"$SLURM_ARRAY_TASK_ID\" --csv "
         << shell_quote(d + "/part-") << "\"$SLURM_ARRAY_TASK_ID\".csv -q\n";
  const std::string file = d + "/sweep.sbatch";
  write_output_file(file, script.str());
  out << "wrote " << file << ": " << points << " points in " << tasks << " array tasks of at most " << chunk << "\n";
  if (!spec.submit) {
    out << "submit it with: sbatch " << file << "\nthen merge: ddlsim sweep --collect " << spec.slurm_dir
        << " --csv FILE\n";
    return;
  }
  std::string id = run_capture({"sbatch", "--parsable", file}, d);
  id.erase(id.find_last_not_of(" \n\r") + 1);
  out << "submitted job " << id << "\n";
}

/** The number of array tasks a --slurm script declared ("#SBATCH --array=0-N"). */
std::size_t declared_tasks(const std::string& script_path)
{
  std::istringstream in(read_file(script_path));
  std::string line;
  const std::string prefix = "#SBATCH --array=0-";
  while (std::getline(in, line)) {
    const std::string last = line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : "";
    if (!last.empty() && last.size() < 9 && last.find_first_not_of("0123456789") == std::string::npos)
      return static_cast<std::size_t>(std::stoul(last)) + 1;
  }
  throw InputError(script_path + ": no '" + prefix + "N' line (not written by ddlsim sweep --slurm)");
}

void collect(const SweepSpec& spec, std::ostream& out)
{
  if (spec.csv.empty())
    throw ConfigError("sweep --collect: --csv FILE is required ('-' for standard output)");
  if (!spec.axes.empty() || !spec.fixed.empty() || spec.collective || !spec.slurm_dir.empty() || spec.task >= 0 ||
      spec.chunk || spec.submit)
    throw ConfigError("sweep --collect DIR takes only --csv and -q");
  const std::string& dir = spec.collect_dir;
  if (!std::filesystem::is_directory(dir))
    throw InputError("--collect " + dir + ": not a directory");
  const std::size_t tasks = declared_tasks(dir + "/sweep.sbatch");
  if (spec.csv != "-")
    check_outputs({{"--csv", spec.csv}}, {});
  std::vector<std::string> header;
  std::string merged;
  std::vector<std::string> missing;
  std::size_t rows = 0, failed = 0;
  for (std::size_t t = 0; t < tasks; ++t) {
    const std::string part = dir + "/part-" + std::to_string(t) + ".csv";
    if (!readable_file(part)) {
      missing.push_back(std::to_string(t));
      continue;
    }
    const CsvFile f = read_csv(part);
    if (header.empty()) {
      header = f.header;
      merged = csv_line(header);
    } else if (f.header != header) {
      throw InputError(part + ": its columns differ from part-0's (" + join(f.header, ",") + ")");
    }
    for (const auto& r : f.rows)
      merged += csv_line(r);
    rows += f.rows.size();
    if (readable_file(part + ".errors")) {
      std::istringstream e(read_file(part + ".errors"));
      std::string line;
      while (std::getline(e, line))
        failed += !line.empty();
    }
  }
  if (header.empty())
    throw InputError("--collect " + dir + ": no task wrote its CSV yet (part-0.csv .. part-" +
                     std::to_string(tasks - 1) + ".csv)");
  if (spec.csv == "-")
    out << merged << std::flush;
  else
    write_output_file(spec.csv, merged);
  if (!missing.empty())
    throw Error("sweep --collect: " + std::to_string(missing.size()) + " of " + std::to_string(tasks) +
                " tasks wrote no CSV (tasks " + join(missing, ", ") + "); merged " + std::to_string(rows) + " rows");
  if (failed)
    throw Error("sweep --collect: " + std::to_string(failed) + " points failed (see " + dir +
                "/part-*.csv.errors); merged " + std::to_string(rows) + " rows");
  if (spec.csv != "-" && !spec.quiet)
    out << "merged " << rows << " rows from " << tasks << " tasks into " << spec.csv << "\n";
}

} // namespace

void sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      out << kSweepUsage;
      return;
    }
    if (a == "--version") {
      out << version_string() << "\n";
      return;
    }
  }
  const SweepSpec spec = parse_sweep_args(args);
  if (!spec.collect_dir.empty())
    collect(spec, out);
  else if (!spec.slurm_dir.empty())
    write_slurm(spec, out);
  else
    run_sweep(spec, out, err);
}

} // namespace ddlsim::cli
