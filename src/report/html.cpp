// A run's report as one self-contained HTML page: summary, breakdown and per-layer charts (inline SVG), link table.
#include "report/html.hpp"

#include "common/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace ddlsim::report {

std::string html_escape(const std::string& text)
{
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

namespace {

// Colours: Tableau 10 (distinct in print and for the common colour-vision deficiencies); one per kind of time.
const char* const kIo = "#bab0ac";
const char* const kH2d = "#9c755f";
const char* const kForward = "#4e79a7";
const char* const kBackward = "#76b7e2";
const char* const kUpdate = "#b07aa1";
const char* const kInput = "#edc948";
const char* const kHidden = "#59a14f";
const char* const kExposed = "#e15759";

// Rows of the per-layer chart beyond this are summed in one line under it (a page stays a page).
constexpr std::size_t kMaxLayerRows = 400;
// Links in the table of the busiest ones (all of them are in the table below it).
constexpr int kTopLinks = 10;

std::string fmt(const char* format, double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pct(double part, double whole)
{
  return whole > 0 ? fmt("%.1f %%", 100.0 * part / whole) : std::string("n/a");
}

/** A number for an SVG coordinate: two decimals are enough for a pixel. */
std::string px(double v)
{
  return fmt("%.2f", v);
}

/** Steps of 1, 2 or 5 times a power of ten, about `count` of them up to `max`. */
double tick_step(double max, int count)
{
  if (!(max > 0))
    return 1;
  const double raw = max / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= raw)
      return m * power;
  return 10 * power;
}

/** "12.5": a tick label in milliseconds, no trailing zeros. */
std::string tick_label(double ms)
{
  return fmt("%g", std::round(ms * 1e6) / 1e6);
}

/** A rectangle with a tooltip. */
void rect(std::ostream& out, double x, double y, double w, double h, const char* colour, const std::string& tip)
{
  out << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(std::max(0.0, w)) << "\" height=\"" << px(h)
      << "\" fill=\"" << colour << "\"><title>" << html_escape(tip) << "</title></rect>";
}

void text(std::ostream& out, double x, double y, const std::string& content, const char* anchor = "start",
          const char* cls = "")
{
  out << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\" text-anchor=\"" << anchor << "\"";
  if (*cls)
    out << " class=\"" << cls << "\"";
  out << ">" << html_escape(content) << "</text>";
}

/** Vertical grid lines and their labels (ms) over [x0, x0 + width] for values 0..max_ms, labels at `label_y`. */
void axis(std::ostream& out, double x0, double width, double max_ms, double top, double bottom, double label_y)
{
  const double step = tick_step(max_ms, 5);
  for (int k = 0; k * step <= max_ms * (1 + 1e-9); ++k) {
    const double x = x0 + width * (k * step) / max_ms;
    out << "<line x1=\"" << px(x) << "\" x2=\"" << px(x) << "\" y1=\"" << px(top) << "\" y2=\"" << px(bottom)
        << "\" class=\"grid\"/>";
    text(out, x, label_y, tick_label(k * step), "middle", "tick");
  }
}

struct Part {
  std::string name;
  double seconds;
  const char* colour;
};

/** The iteration's time, part by part, as on the console (they add up to the iteration time). */
std::vector<Part> breakdown_parts(const proto::Report& r)
{
  const auto& b = r.breakdown();
  std::vector<Part> parts;
  if (r.config().schedule_config().io_prefetch() > 0) {
    parts.push_back({"input not hidden by prefetch", b.exposed_input_s(), kInput});
  } else {
    parts.push_back({"data loading (I/O)", b.io_s(), kIo});
    parts.push_back({"host-to-device copy", b.h2d_s(), kH2d});
  }
  parts.push_back({"forward", b.forward_s(), kForward});
  parts.push_back({"backward", b.backward_s(), kBackward});
  parts.push_back({"update", b.update_s(), kUpdate});
  parts.push_back({"communication not hidden", b.exposed_communication_s(), kExposed});
  return parts;
}

void swatch(std::ostream& out, const char* colour)
{
  out << "<span class=\"swatch\" style=\"background:" << colour << "\"></span>";
}

void summary(std::ostream& out, const proto::Report& r)
{
  const auto& c = r.config();
  const auto& b = r.breakdown();
  const bool timed = r.iteration_time_s() > 0 && r.single_gpu_iteration_time_s() > 0;
  const unsigned first = c.iterations() - r.measured_iterations() + 1;
  const std::string measured = r.measured_iterations() > 1 ? "mean of iterations " + std::to_string(first) + ".." +
                                                                 std::to_string(c.iterations())
                               : c.iterations() == 1 ? std::string("the only iteration")
                                                     : "iteration " + std::to_string(first);
  struct Card {
    std::string label, value, exact, note;
  };
  const std::vector<Card> cards = {
      {"iteration time", format_seconds(r.iteration_time_s()), format_double(r.iteration_time_s()) + " s", measured},
      {"throughput", r.iteration_time_s() > 0 ? fmt("%.1f samples/s", r.throughput_samples_per_s()) : "n/a",
       format_double(r.throughput_samples_per_s()) + " samples/s",
       std::to_string(r.gpus()) + " GPUs x " + std::to_string(r.batch_size_per_gpu()) + " samples per GPU"},
      {"scaling efficiency", timed ? fmt("%.1f %%", 100.0 * r.scaling_efficiency()) : "n/a",
       format_double(r.scaling_efficiency()),
       timed ? "speedup " + fmt("%.3f x", r.speedup()) + " over one GPU (" +
                   format_seconds(r.single_gpu_iteration_time_s()) + " per iteration)"
             : std::string("undefined: no computation")},
      {"communication hidden", pct(b.communication_s() - b.exposed_communication_s(), b.communication_s()),
       format_double(b.communication_s() - b.exposed_communication_s()) + " s of " +
           format_double(b.communication_s()) + " s",
       format_seconds(b.exposed_communication_s()) + " of " + format_seconds(b.communication_s()) +
           " not hidden behind computation"},
      {"gradient per iteration", format_bytes(double(r.gradient_bytes())), std::to_string(r.gradient_bytes()) + " B",
       "in " + std::to_string(r.aggregations_per_iteration()) + " allreduces"},
      {"bytes sent per iteration", format_bytes(double(r.bytes_sent_per_iteration())),
       std::to_string(r.bytes_sent_per_iteration()) + " B", "by all GPUs together"},
  };
  out << "<section class=\"cards\">\n";
  for (const auto& card : cards)
    out << "<div class=\"card\"><div class=\"label\">" << html_escape(card.label)
        << "</div><div class=\"value\" title=\"" << html_escape(card.exact) << "\">" << html_escape(card.value)
        << "</div><div class=\"note\">" << html_escape(card.note) << "</div></div>\n";
  out << "</section>\n";
}

void breakdown_chart(std::ostream& out, const proto::Report& r)
{
  const auto& b = r.breakdown();
  const double t = r.iteration_time_s();
  const double hidden = std::max(0.0, b.communication_s() - b.exposed_communication_s());
  const double max_s = std::max({t, b.communication_s(), 1e-12});
  const double max_ms = 1e3 * max_s;
  const double label_w = 215, width = 760, bar_h = 34, top = 12;
  const double total_w = label_w + width + 20, height = top + 2 * bar_h + 26 + 34;
  out << "<h2>Where one iteration's time goes</h2>\n<p class=\"explain\">Mean over the GPUs and the measured "
         "iterations. The top bar adds up to the iteration time; the bottom bar is all the time spent in gradient "
         "aggregation, split into the part hidden behind computation and the part nothing hides (the same red "
         "segment as above). Milliseconds.</p>\n";
  out << "<svg class=\"chart\" id=\"breakdown-chart\" viewBox=\"0 0 " << px(total_w) << " " << px(height)
      << "\" width=\"" << px(total_w) << "\" height=\"" << px(height)
      << "\" role=\"img\" aria-label=\"iteration breakdown\">";
  const double scale = width / max_s;
  const double axis_bottom = top + 2 * bar_h + 16;
  axis(out, label_w, width, max_ms, top - 4, axis_bottom, axis_bottom + 14);
  text(out, label_w + width / 2, axis_bottom + 30, "time (ms)", "middle", "axis-title");
  text(out, label_w - 8, top + bar_h * 0.62, "iteration " + format_seconds(t), "end", "row-label");
  double x = label_w;
  for (const auto& p : breakdown_parts(r)) {
    const double w = p.seconds * scale;
    rect(out, x, top, w, bar_h - 6, p.colour,
         p.name + ": " + format_seconds(p.seconds) + " (" + pct(p.seconds, t) + ")");
    if (w > 70)
      text(out, x + w / 2, top + bar_h * 0.55, p.name == "communication not hidden" ? "exposed" : p.name, "middle",
           "in-bar");
    x += w;
  }
  const double y2 = top + bar_h + 4;
  text(out, label_w - 8, y2 + bar_h * 0.62, "communication " + format_seconds(b.communication_s()), "end", "row-label");
  rect(out, label_w, y2, hidden * scale, bar_h - 6, kHidden,
       "hidden behind computation: " + format_seconds(hidden) + " (" + pct(hidden, b.communication_s()) + ")");
  if (hidden * scale > 70)
    text(out, label_w + hidden * scale / 2, y2 + bar_h * 0.55, "hidden", "middle", "in-bar");
  rect(out, label_w + hidden * scale, y2, b.exposed_communication_s() * scale, bar_h - 6, kExposed,
       "not hidden: " + format_seconds(b.exposed_communication_s()) + " (" +
           pct(b.exposed_communication_s(), b.communication_s()) + ")");
  out << "</svg>\n";
  // The numbers, as a legend.
  out << "<table class=\"legend\"><thead><tr><th></th><th>part of the iteration</th><th class=\"num\">time</th>"
         "<th class=\"num\">share</th></tr></thead><tbody>\n";
  for (const auto& p : breakdown_parts(r)) {
    out << "<tr><td>";
    swatch(out, p.colour);
    out << "</td><td>" << html_escape(p.name) << "</td><td class=\"num\" title=\"" << format_double(p.seconds)
        << " s\">" << format_seconds(p.seconds) << "</td><td class=\"num\">" << pct(p.seconds, t) << "</td></tr>\n";
  }
  out << "<tr class=\"total\"><td></td><td>= iteration time</td><td class=\"num\" title=\"" << format_double(t)
      << " s\">" << format_seconds(t) << "</td><td class=\"num\">" << pct(t, t) << "</td></tr>\n";
  out << "<tr><td>";
  swatch(out, kHidden);
  out << "</td><td>communication hidden behind computation</td><td class=\"num\">" << format_seconds(hidden)
      << "</td><td class=\"num\">" << pct(hidden, b.communication_s()) << " of communication</td></tr>\n";
  out << "</tbody></table>\n";
}

/** One row of the per-layer chart: one aggregation (the computation of its layers beside it), or one layer. */
struct LayerRow {
  std::string label; ///< shown (short)
  std::string full;  ///< tooltip: every layer
  double forward = 0, backward = 0, hidden = 0, exposed = 0;
  std::string bytes; ///< of the aggregation ("" without one)
};

std::vector<LayerRow> layer_rows(const proto::Report& r, std::string* note)
{
  std::map<std::string, const proto::LayerRecord*> by_name;
  for (const auto& l : r.layers())
    by_name.emplace(l.name(), &l);
  std::vector<LayerRow> rows;
  if (r.aggregations_size() == 0) {
    for (const auto& l : r.layers())
      rows.push_back({l.name(), l.name(), l.forward_s(), l.backward_s(), 0, 0, ""});
    *note = "No aggregations (one GPU, or no gradients): computation only.";
    return rows;
  }
  std::map<std::string, int> seen; // layer -> aggregations that carried part of it so far
  for (const auto& a : r.aggregations()) {
    LayerRow row;
    for (int k = 0; k < a.layers_size(); ++k) {
      const std::string& name = a.layers(k);
      row.full += (k ? ", " : "") + name;
      if (seen[name]++ == 0) { // a layer split over several aggregations counts its computation once
        row.forward += by_name.at(name)->forward_s();
        row.backward += by_name.at(name)->backward_s();
      }
    }
    row.label = a.layers(0);
    if (a.layers_size() > 1)
      row.label += " +" + std::to_string(a.layers_size() - 1);
    else if (seen[a.layers(0)] > 1)
      row.label += " (part " + std::to_string(seen[a.layers(0)]) + ")";
    row.exposed = a.exposed_s();
    row.hidden = a.time_s() - a.exposed_s();
    row.bytes = format_bytes(double(a.bytes()));
    rows.push_back(row);
  }
  int without = 0;
  double compute = 0;
  for (const auto& l : r.layers())
    if (seen.count(l.name()) == 0) {
      ++without;
      compute += l.forward_s() + l.backward_s();
    }
  if (without > 0)
    *note = std::to_string(without) + " layer" + (without == 1 ? "" : "s") + " without a gradient to aggregate (" +
            format_seconds(compute) + " of forward and backward together) " + (without == 1 ? "is" : "are") +
            " not in the chart.";
  return rows;
}

void layer_chart(std::ostream& out, const proto::Report& r)
{
  std::string note;
  std::vector<LayerRow> rows = layer_rows(r, &note);
  out << "<h2>Per layer: computation and communication</h2>\n<p class=\"explain\">One row per aggregation, in the "
         "order they ran on GPU 0 in its last measured iteration (the order gradients become ready: last layer "
         "first). Left: the forward and backward time of the layers whose gradients it carried. Right: the "
         "aggregation, <b style=\"color:"
      << kHidden << "\">hidden</b> while backward was still running, <b style=\"color:" << kExposed
      << "\">exposed</b> after the last backward ended. Both panels share one scale, in milliseconds; a label "
         "\"+N\" means N more layers merged into the same aggregation. Hover a bar for its numbers.</p>\n";
  if (rows.empty()) {
    out << "<p>The report lists no layers.</p>\n";
    return;
  }
  LayerRow rest;
  std::size_t left_out = 0;
  if (rows.size() > kMaxLayerRows) {
    for (std::size_t i = kMaxLayerRows; i < rows.size(); ++i) {
      rest.forward += rows[i].forward;
      rest.backward += rows[i].backward;
      rest.hidden += rows[i].hidden;
      rest.exposed += rows[i].exposed;
    }
    left_out = rows.size() - kMaxLayerRows;
    rows.resize(kMaxLayerRows);
    rest.label = "the other " + std::to_string(left_out);
    rest.full = std::to_string(left_out) + " rows summed";
    rows.push_back(rest);
  }
  double max_s = 1e-12;
  for (const auto& row : rows)
    max_s = std::max({max_s, row.forward + row.backward, row.hidden + row.exposed});
  const double max_ms = 1e3 * max_s;
  const double label_w = 190, panel_w = 350, gap = 36, row_h = 15, top = 58;
  const double x_compute = label_w, x_comm = label_w + panel_w + gap;
  const double width = x_comm + panel_w + 20;
  const double bottom = top + row_h * double(rows.size());
  const double height = bottom + 40;
  out << "<svg class=\"chart\" id=\"layer-chart\" viewBox=\"0 0 " << px(width) << " " << px(height) << "\" width=\""
      << px(width) << "\" height=\"" << px(height) << "\" role=\"img\" aria-label=\"per-layer chart\">";
  for (std::size_t i = 0; i < rows.size(); i += 2)
    out << "<rect x=\"0\" y=\"" << px(top + row_h * double(i)) << "\" width=\"" << px(width) << "\" height=\""
        << px(row_h) << "\" class=\"stripe\"/>";
  text(out, x_compute + panel_w / 2, 14, "computation of its layers (ms)", "middle", "panel-title");
  text(out, x_comm + panel_w / 2, 14, "communication (ms)", "middle", "panel-title");
  // legends under the titles
  double lx = x_compute + panel_w / 2 - 90;
  rect(out, lx, 22, 10, 10, kForward, "forward");
  text(out, lx + 14, 31, "forward", "start", "tick");
  rect(out, lx + 90, 22, 10, 10, kBackward, "backward");
  text(out, lx + 104, 31, "backward", "start", "tick");
  lx = x_comm + panel_w / 2 - 90;
  rect(out, lx, 22, 10, 10, kHidden, "hidden");
  text(out, lx + 14, 31, "hidden", "start", "tick");
  rect(out, lx + 90, 22, 10, 10, kExposed, "exposed");
  text(out, lx + 104, 31, "exposed", "start", "tick");
  for (double x0 : {x_compute, x_comm}) { // labels above and below: the chart may be taller than a screen
    axis(out, x0, panel_w, max_ms, top - 2, bottom + 2, bottom + 14);
    axis(out, x0, panel_w, max_ms, top - 2, top - 2, top - 5);
  }
  text(out, x_compute + panel_w / 2, bottom + 30, "ms", "middle", "axis-title");
  text(out, x_comm + panel_w / 2, bottom + 30, "ms", "middle", "axis-title");
  const double scale = panel_w / max_s;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const LayerRow& row = rows[i];
    const double y = top + row_h * double(i);
    const double bar_h = row_h - 4;
    std::string label = row.label;
    if (label.size() > 30) { // cut on a character boundary (names are UTF-8)
      std::size_t cut = 29;
      while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80)
        --cut;
      label = label.substr(0, cut) + "\u2026";
    }
    out << "<g><title>" << html_escape(row.full) << "</title>";
    text(out, label_w - 6, y + row_h - 4, label, "end", "layer-label");
    out << "</g>";
    const std::string who = row.full + ": ";
    rect(out, x_compute, y + 2, row.forward * scale, bar_h, kForward, who + "forward " + format_seconds(row.forward));
    rect(out, x_compute + row.forward * scale, y + 2, row.backward * scale, bar_h, kBackward,
         who + "backward " + format_seconds(row.backward));
    if (!row.bytes.empty() || row.hidden + row.exposed > 0) {
      const std::string what = who + row.bytes + " in " + format_seconds(row.hidden + row.exposed) + ": ";
      rect(out, x_comm, y + 2, row.hidden * scale, bar_h, kHidden, what + format_seconds(row.hidden) + " hidden");
      rect(out, x_comm + row.hidden * scale, y + 2, row.exposed * scale, bar_h, kExposed,
           what + format_seconds(row.exposed) + " exposed");
    }
  }
  out << "</svg>\n";
  double hidden = 0, exposed = 0;
  for (const auto& a : r.aggregations()) {
    hidden += a.time_s() - a.exposed_s();
    exposed += a.exposed_s();
  }
  out << "<p class=\"explain\">On GPU 0: " << r.aggregations_size() << " aggregations, " << format_seconds(hidden)
      << " hidden and " << format_seconds(exposed) << " exposed in all.";
  if (!note.empty())
    out << " " << html_escape(note);
  if (left_out > 0)
    out << " The last " << left_out << " rows are summed in one.";
  out << "</p>\n";
}

std::string gbps(double bytes_per_s)
{
  return fmt("%.3f GB/s", bytes_per_s / 1e9);
}

void utilisation_bar(std::ostream& out, double u)
{
  const double w = 80;
  out << "<svg class=\"ubar\" viewBox=\"0 0 " << w << " 10\" width=\"" << w << "\" height=\"10\" aria-hidden=\"true\">"
      << "<rect x=\"0\" y=\"0\" width=\"" << w << "\" height=\"10\" fill=\"#eee\"/><rect x=\"0\" y=\"0\" width=\""
      << px(w * std::min(1.0, u)) << "\" height=\"10\" fill=\"" << kForward << "\"/></svg>";
}

void link_rows(std::ostream& out, const std::vector<const proto::LinkRecord*>& links, double t)
{
  for (const auto* l : links) {
    out << "<tr><td>" << html_escape(l->name()) << "</td><td>" << html_escape(l->link_class()) << "</td>"
        << "<td class=\"num\" data-sort=\"" << format_double(l->bandwidth_bytes_per_s()) << "\">"
        << gbps(l->bandwidth_bytes_per_s()) << "</td>"
        << "<td class=\"num\" data-sort=\"" << l->bytes_per_iteration() << "\" title=\"" << l->bytes_per_iteration()
        << " B\">" << format_bytes(double(l->bytes_per_iteration())) << "</td>"
        << "<td class=\"num\" data-sort=\"" << format_double(l->busy_s_per_iteration()) << "\" title=\""
        << format_double(l->busy_s_per_iteration()) << " s\">" << format_seconds(l->busy_s_per_iteration())
        << "</td><td class=\"num\" data-sort=\"" << format_double(t > 0 ? l->busy_s_per_iteration() / t : 0) << "\">"
        << pct(l->busy_s_per_iteration(), t) << "</td>"
        << "<td class=\"num\" data-sort=\"" << format_double(l->utilisation()) << "\">"
        << fmt("%.1f %%", 100 * l->utilisation()) << " ";
    utilisation_bar(out, l->utilisation());
    out << "</td></tr>\n";
  }
}

const char* const kLinkHead =
    "<thead><tr><th>link</th><th>class</th><th class=\"num\">bandwidth</th><th class=\"num\">bytes per "
    "iteration</th><th class=\"num\">busy per iteration</th><th class=\"num\">busy share of the iteration</th><th "
    "class=\"num\">mean utilisation</th></tr></thead>";

void link_tables(std::ostream& out, const proto::Report& r)
{
  const double t = r.iteration_time_s();
  out << "<h2>Links</h2>\n";
  if (r.links_size() == 0) {
    out << "<p>No link carried traffic (one GPU, or nothing to aggregate).</p>\n";
    return;
  }
  std::vector<const proto::LinkRecord*> links;
  for (const auto& l : r.links())
    links.push_back(&l);
  std::stable_sort(links.begin(), links.end(), [](const auto* a, const auto* b) { // equally busy: the fuller first
    if (a->busy_s_per_iteration() != b->busy_s_per_iteration())
      return a->busy_s_per_iteration() > b->busy_s_per_iteration();
    return a->utilisation() > b->utilisation();
  });
  out << "<p class=\"explain\">Per iteration, mean over the simulated iterations. <i>Busy</i>: time some transfer "
         "was using the link; <i>mean utilisation</i>: bytes carried / (bandwidth x iteration time "
      << format_seconds(t) << "). The busiest come first; of equally busy links, the higher utilisation.</p>\n";
  // Per class
  struct Class {
    int links = 0;
    std::uint64_t bytes = 0;
    double busy = 0, utilisation = 0;
  };
  std::map<std::string, Class> classes;
  for (const auto& l : r.links()) {
    Class& c = classes[l.link_class()];
    ++c.links;
    c.bytes += l.bytes_per_iteration();
    c.busy = std::max(c.busy, l.busy_s_per_iteration());
    c.utilisation = std::max(c.utilisation, l.utilisation());
  }
  std::vector<std::pair<std::string, Class>> by_class(classes.begin(), classes.end());
  std::stable_sort(by_class.begin(), by_class.end(),
                   [](const auto& a, const auto& b) { return a.second.utilisation > b.second.utilisation; });
  out << "<h3>By link class</h3>\n<table class=\"links sortable\"><thead><tr><th>class</th><th class=\"num\">"
         "links</th><th class=\"num\">bytes per iteration, all of them</th><th class=\"num\">busiest one busy"
         "</th><th class=\"num\">highest mean utilisation</th></tr></thead><tbody>\n";
  for (const auto& [name, c] : by_class) {
    out << "<tr><td>" << html_escape(name) << "</td><td class=\"num\" data-sort=\"" << c.links << "\">" << c.links
        << "</td><td class=\"num\" data-sort=\"" << c.bytes << "\" title=\"" << c.bytes << " B\">"
        << format_bytes(double(c.bytes)) << "</td><td class=\"num\" data-sort=\"" << format_double(c.busy) << "\">"
        << format_seconds(c.busy) << "</td><td class=\"num\" data-sort=\"" << format_double(c.utilisation) << "\">"
        << fmt("%.1f %%", 100 * c.utilisation) << " ";
    utilisation_bar(out, c.utilisation);
    out << "</td></tr>\n";
  }
  out << "</tbody></table>\n";
  const std::vector<const proto::LinkRecord*> top(links.begin(),
                                                  links.begin() + std::min<std::ptrdiff_t>(kTopLinks, links.size()));
  out << "<h3>The " << top.size() << " busiest link" << (top.size() == 1 ? "" : "s") << " (of " << links.size()
      << ")</h3>\n<table class=\"links sortable\" id=\"top-links\">" << kLinkHead << "<tbody>\n";
  link_rows(out, top, t);
  out << "</tbody></table>\n";
  out << "<details><summary>All " << links.size() << " links (click a column to sort)</summary>\n"
      << "<table class=\"links sortable\" id=\"all-links\">" << kLinkHead << "<tbody>\n";
  link_rows(out, links, t);
  out << "</tbody></table></details>\n";
}

const char* const kStyle = R"(
body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;color:#222;margin:0;background:#fafafa}
main{max-width:1160px;margin:0 auto;padding:18px 28px 40px;background:#fff}
h1{font-size:24px;margin:4px 0 6px}h2{font-size:19px;margin:30px 0 6px;border-bottom:2px solid #ddd;padding-bottom:3px}
h3{font-size:15px;margin:18px 0 6px}
.config{color:#555;font-size:13px;margin:0 0 14px;line-height:1.5}
.cards{display:grid;grid-template-columns:repeat(3,1fr);gap:12px}
.card{border:1px solid #ddd;border-radius:6px;padding:10px 12px;background:#f7f9fc}
.card .label{font-size:12px;color:#555;text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:24px;font-weight:bold;margin:4px 0}
.card .note{font-size:12px;color:#555}
.explain{font-size:13px;color:#444;max-width:1000px;line-height:1.45}
svg.chart{display:block;max-width:100%;height:auto;font-size:12px;margin:6px 0}
svg .grid{stroke:#ccc;stroke-width:1}svg .tick{font-size:11px;fill:#444}svg .axis-title{font-size:12px;fill:#444}
svg .row-label{font-size:12px;font-weight:bold;fill:#222}svg .in-bar{font-size:12px;fill:#fff;font-weight:bold}
svg .panel-title{font-size:13px;font-weight:bold;fill:#222}svg .layer-label{font-size:11px;fill:#222}
svg .stripe{fill:#f2f2f2}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{padding:3px 9px;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:middle}
th{background:#f0f0f0}td.num,th.num{text-align:right;white-space:nowrap}
tr.total td{font-weight:bold;border-top:2px solid #999}
table.sortable th{cursor:pointer}
.swatch{display:inline-block;width:13px;height:13px;border-radius:2px;vertical-align:middle}
svg.ubar{vertical-align:middle;margin-left:4px}
details{margin:10px 0}summary{cursor:pointer;font-size:14px}
footer{font-size:12px;color:#666;margin-top:30px}
)";

// Sorts a table by a clicked column (numbers by their data-sort value), then marks the page rendered: the test in
// headless Chromium looks for the mark, so a script error (which stops before it) fails the test.
const char* const kScript = R"(
(function () {
  function key(cell) {
    var v = cell.getAttribute('data-sort');
    return v === null ? cell.textContent.toLowerCase() : parseFloat(v);
  }
  function sortBy(table, column) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var down = table.getAttribute('data-sorted') !== String(column) + 'd';
    rows.sort(function (a, b) {
      var x = key(a.cells[column]), y = key(b.cells[column]);
      return (x < y ? -1 : x > y ? 1 : 0) * (down ? -1 : 1);
    });
    rows.forEach(function (row) { body.appendChild(row); });
    table.setAttribute('data-sorted', String(column) + (down ? 'd' : 'u'));
  }
  var tables = document.querySelectorAll('table.sortable');
  Array.prototype.forEach.call(tables, function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.addEventListener('click', function () { sortBy(table, column); });
    });
  });
  var charts = document.querySelectorAll('svg.chart');
  var drawn = 0;
  Array.prototype.forEach.call(charts, function (svg) {
    if (svg.getBBox().width > 0) drawn += 1;
  });
  document.body.setAttribute('data-ddlsim-charts', String(drawn) + '/' + String(charts.length));
  if (drawn === charts.length) document.body.setAttribute('data-ddlsim-rendered', 'ok');
})();
)";

} // namespace

std::string html_page(const proto::Report& r, const std::string& source)
{
  const auto& c = r.config();
  std::ostringstream out;
  const std::string title = r.model() + " on " + std::to_string(r.gpus()) + " x " + r.gpu() + ": " +
                            format_seconds(r.iteration_time_s()) + " per iteration";
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>ddlsim: "
      << html_escape(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n";
  out << "<h1>" << html_escape(title) << "</h1>\n<p class=\"config\">Platform <b>" << html_escape(c.platform_file())
      << "</b>, workload <b>" << html_escape(c.workload_file()) << "</b>"
      << (c.framework().empty() ? "" : ", framework preset <b>" + html_escape(c.framework()) + "</b>") << "<br>"
      << html_escape(c.algorithm()) << " allreduce, schedule " << html_escape(c.schedule()) << ", " << c.iterations()
      << " iteration" << (c.iterations() == 1 ? "" : "s") << " simulated, batch " << r.batch_size_per_gpu()
      << " samples per GPU</p>\n";
  summary(out, r);
  breakdown_chart(out, r);
  layer_chart(out, r);
  link_tables(out, r);
  out << "<footer>Made by <code>ddlsim report</code> from " << html_escape(source) << "; the run: ddlsim "
      << html_escape(r.ddlsim_version()) << ", SimGrid " << html_escape(r.simgrid_version())
      << ". Times are simulated seconds.</footer>\n</main>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
  return out.str();
}

} // namespace ddlsim::report
