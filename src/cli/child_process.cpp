// Running ddlsim itself as a child process (one simulation per process).
#include "cli/child_process.hpp"

#include "common/error.hpp"

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ddlsim::cli {

/** The running ddlsim binary (a sweep runs itself once per point). */
std::string self_exe()
{
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    throw Error(std::string("cannot find the ddlsim binary (/proc/self/exe: ") + std::strerror(errno) + ")");
  return std::string(buf, static_cast<std::size_t>(n));
}

std::vector<char*> c_args(const std::vector<std::string>& argv)
{
  std::vector<char*> c_argv;
  for (const auto& a : argv)
    c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  return c_argv;
}

/** Starts `argv` with stdout to /dev/null and stderr to `err_path`; returns its pid. */
pid_t spawn(const std::vector<std::string>& argv, const std::string& err_path)
{
  std::vector<char*> c_argv = c_args(argv);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw Error(std::string("cannot start a run (fork: ") + std::strerror(errno) + ")");
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_RDWR);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(null_fd, STDOUT_FILENO);
    }
    if (err_fd >= 0)
      ::dup2(err_fd, STDERR_FILENO);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execv(c_argv[0], c_argv.data());
    std::fprintf(stderr, "ddlsim: error: cannot run %s: %s\n", c_argv[0], std::strerror(errno));
    ::_exit(127);
  }
  return pid;
}

int run_child(const std::vector<std::string>& argv, const std::string& err_path)
{
  const pid_t pid = spawn(argv, err_path);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw Error(std::string("cannot wait for a child run (waitpid: ") + std::strerror(errno) + ")");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace ddlsim::cli
