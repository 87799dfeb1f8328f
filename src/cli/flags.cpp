// The command line's names for the library's fields: errors from below name fields, users see flags.
#include "cli/flags.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <map>

namespace ddlsim::cli {

std::string flag_for(const std::string& name)
{
  // Fields whose flag is not their own name.
  static const std::map<std::string, std::string> renamed = {{"ps_servers", "--servers"},
                                                             {"simgrid_cfg", "--cfg"},
                                                             {"msg_overhead_s", "--msg-overhead"},
                                                             {"reduce_s_per_byte", "--reduce-cost"}};
  if (const auto it = renamed.find(name); it != renamed.end())
    return it->second;
  std::string flag = "--" + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string with_flags(const std::string& message_template)
{
  return render_fields(message_template, flag_for);
}

} // namespace ddlsim::cli
