// First workload generator: spread a measured single-GPU iteration time over layers by FLOPs.
#include "workload/flop_model.hpp"

#include "common/error.hpp"
#include "platform/gpu_catalog.hpp"
#include "workload/workload.hpp"

#include <cstdio>

namespace ddlsim::workload {

const std::vector<CalibrationPoint>& calibration_points() {
  // TensorFlow 2017 benchmarks, one Tesla P100 (DGX-1, SXM2), synthetic ImageNet data.
  static const std::vector<CalibrationPoint> points = {
      {"resnet50", "P100-SXM2", 32, 195.0,
       "shared/data/single-gpu-throughput/tensorflow-2017.csv: 'DGX-1 P100 - other results (batch 32)', "
       "ResNet-50, batch 32, synthetic: 195 images/s"},
      {"resnet50", "P100-SXM2", 64, 219.0,
       "shared/data/single-gpu-throughput/tensorflow-2017.csv: 'DGX-1 P100', ResNet-50, batch 64, synthetic: "
       "219 images/s"},
  };
  return points;
}

namespace {

const CalibrationPoint& find_point(const std::string& model, unsigned batch) {
  std::string have;
  for (const auto& p : calibration_points()) {
    if (p.model != model)
      continue;
    if (p.batch == batch)
      return p;
    have += (have.empty() ? "" : ", ") + std::to_string(p.batch);
  }
  throw ConfigError("no calibration point for model '" + model + "' at batch " + std::to_string(batch) +
                    (have.empty() ? std::string(" (none for this model)") : " (measured batches: " + have + ")"));
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

} // namespace

proto::Workload generate_flop_model(const FlopModelRequest& request) {
  const auto layers = model_by_name(request.model).layers;
  const auto& target = platform::gpu_by_name(request.gpu);
  const auto& point = find_point(request.model, request.batch);
  const auto& measured_gpu = platform::gpu_by_name(point.gpu);
  if (!(request.h2d_bytes_per_s > 0))
    throw ConfigError("host-to-device bandwidth must be > 0 bytes/s");

  std::uint64_t params = 0;
  double flops = 0;
  for (const auto& l : layers) {
    params += l.parameters;
    flops += l.forward_flops_per_sample + l.backward_flops_per_sample;
  }
  const double gradient_bytes = 4.0 * double(params);
  const double measured_iteration_s = request.batch / point.samples_per_s;
  const double scaled_iteration_s = measured_iteration_s * measured_gpu.peak_fp32_flops / target.peak_fp32_flops;
  // SGD update: read weights and gradients, write weights, each fp32.
  const double update_s = 3.0 * gradient_bytes / target.memory_bytes_per_s;
  const double compute_s = scaled_iteration_s - update_s;
  if (!(compute_s > 0))
    throw ConfigError("calibration leaves no time for forward and backward passes");

  proto::Workload w;
  w.set_schema_version(kSchemaVersion);
  w.set_model(request.model);
  w.set_batch_size_per_gpu(request.batch);
  w.set_reference_gpu(target.name);
  w.set_io_s(0.0);
  w.set_h2d_s(request.batch * kImagenetSampleBytes / request.h2d_bytes_per_s);
  w.set_update_s(update_s);
  for (const auto& l : layers) {
    auto* out = w.add_layers();
    out->set_name(l.name);
    out->set_forward_s(compute_s * l.forward_flops_per_sample / flops);
    out->set_backward_s(compute_s * l.backward_flops_per_sample / flops);
    out->set_gradient_bytes(static_cast<std::int64_t>(4 * l.parameters));
  }
  w.set_source("ddlsim workload (FLOP-proportional model, workloads/README.md). Calibration: " + point.source +
               ". Scaled by datasheet peak FP32 " + measured_gpu.name + " " +
               fmt("%.4g", measured_gpu.peak_fp32_flops / 1e12) + " TFLOP/s -> " + target.name + " " +
               fmt("%.4g", target.peak_fp32_flops / 1e12) + " TFLOP/s. Update: 3 x fp32 parameters at " +
               fmt("%.4g", target.memory_bytes_per_s / 1e9) + " GB/s. H2D: fp32 224x224x3 samples at " +
               fmt("%.5g", request.h2d_bytes_per_s / 1e9) + " GB/s. I/O: 0 (input pipeline assumed to keep up).");
  validate_workload(w, "generated workload");
  return w;
}

} // namespace ddlsim::workload
