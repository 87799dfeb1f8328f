// Running ddlsim itself as a child process: SimGrid allows one simulation per process, so a sweep or an
// explanation that needs several simulations runs the binary once per simulation.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace ddlsim::cli {

/** @brief The running ddlsim binary (/proc/self/exe). */
std::string self_exe();

/** @brief `argv` as exec wants it: pointers into the strings, then a null pointer (valid while `argv` lives). */
std::vector<char*> c_args(const std::vector<std::string>& argv);

/** @brief Starts `argv` with stdout to /dev/null and stderr to `err_path`; returns its pid. */
pid_t spawn(const std::vector<std::string>& argv, const std::string& err_path);

/** @brief Runs `argv` as spawn() does and waits for it; returns its exit status (128 + signal if killed). */
int run_child(const std::vector<std::string>& argv, const std::string& err_path);

} // namespace ddlsim::cli
