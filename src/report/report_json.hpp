// Reading back a run's JSON report (what `ddlsim run --report` writes), for `ddlsim report`.
#pragma once

#include "proto/report.pb.h"

#include <string>

namespace ddlsim::report {

/** @brief Parses the text of a JSON report. Throws InputError "SOURCE: FIELD: REASON" (one line) for text that is
 *  not JSON, a key given twice, a field of another type, a field a page needs that is missing (ddlsim writes every
 *  field, zeros included, so a missing one means another file or an older report), schema_version other than 1,
 *  a time, byte count or share that is negative or not finite, an aggregation exposed longer than it ran, or an
 *  aggregation naming a layer the report does not list. */
proto::Report parse_report_json(const std::string& text, const std::string& source);

/** @brief parse_report_json() of the file at `path`; InputError when it cannot be read. */
proto::Report load_report_json(const std::string& path);

} // namespace ddlsim::report
