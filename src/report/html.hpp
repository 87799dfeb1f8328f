// A run's report as one self-contained HTML page: summary, breakdown and per-layer charts (inline SVG), link table.
#pragma once

#include "proto/report.pb.h"

#include <string>

namespace ddlsim::report {

/** @brief `text` with & < > " ' as character references: safe inside an element and inside a quoted attribute. */
std::string html_escape(const std::string& text);

/** @brief One HTML page with no external resource (inline CSS, inline SVG charts, a small inline script that only
 *  sorts tables and marks the page rendered): the summary (iteration time, throughput, scaling efficiency, with
 *  units), the iteration breakdown as a stacked bar, per aggregation the computation of its layers beside its
 *  communication hidden behind computation and exposed, and the links (bytes carried, busy time, utilisation; the
 *  busiest first). Every string of the report is escaped. `source` names the report file in the page. */
std::string html_page(const proto::Report& report, const std::string& source);

} // namespace ddlsim::report
