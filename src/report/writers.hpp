// Writers of a Report: the console table and JSON.
#pragma once

#include "proto/report.pb.h"

#include <ostream>
#include <string>

namespace ddlsim::report {

/** @brief The human-readable table `ddlsim run` prints on stdout (every number with its unit). */
void write_console(std::ostream& out, const proto::Report& report);

} // namespace ddlsim::report
