// Every output file ddlsim writes goes through here: written beside the target, then renamed over it.
#include "common/output_file.hpp"

#include "common/error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace ddlsim {

void write_output_file(const std::string& path, const std::string& content)
{
  const std::string temporary = path + ".ddlsim-" + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
      throw WriteError(path + ": cannot open for writing (" + std::strerror(errno) + ")");
    out << content;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw WriteError(path + ": write failed (" + std::strerror(errno) + ")");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::remove(temporary.c_str());
    throw WriteError(path + ": cannot replace the file (" + ec.message() + ")");
  }
}

} // namespace ddlsim
