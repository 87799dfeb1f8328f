// Workload generator: per-layer roofline times, calibrated efficiencies, measured points and the workload builder.
#include "workload/roofline.hpp"

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "workload/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ddlsim::workload {

const NameTable<Precision> kPrecisionNames = {{Precision::Fp32, "fp32"}, {Precision::Fp16, "fp16"}};

const char* precision_name(Precision p)
{
  return name_of(kPrecisionNames, p);
}

Precision parse_precision(const std::string& text, const std::string& what)
{
  return parse_name(kPrecisionNames, text, what);
}

namespace {

const char* const kTf2017 = "data/single-gpu-throughput/tensorflow-2017.csv";
const char* const kOther = "data/single-gpu-throughput/other-sources.csv";

} // namespace

const std::vector<MeasuredPoint>& calibration_points()
{
  static const std::vector<MeasuredPoint> points = {
      // Kepler: TensorFlow 2017 benchmarks, Google Compute Engine K80 (one GK210), synthetic data.
      {"resnet50", "K80", Precision::Fp32, 32, 49.5,
       std::string(kTf2017) + ": 'Google Compute Engine K80 - other results (batch 32)', ResNet-50, 32, synthetic"},
      {"alexnet-owt", "K80", Precision::Fp32, 512, 656,
       std::string(kTf2017) + ": 'Google Compute Engine K80', AlexNet, 512, synthetic"},
      {"vgg16", "K80", Precision::Fp32, 32, 35.4,
       std::string(kTf2017) + ": 'Google Compute Engine K80', VGG16, 32, synthetic"},
      // Pascal: TensorFlow 2017 benchmarks, DGX-1 P100 (SXM2), synthetic data.
      {"resnet50", "P100-SXM2", Precision::Fp32, 32, 195,
       std::string(kTf2017) + ": 'DGX-1 P100 - other results (batch 32)', ResNet-50, 32, synthetic"},
      {"alexnet-owt", "P100-SXM2", Precision::Fp32, 512, 2987,
       std::string(kTf2017) + ": 'DGX-1 P100', AlexNet, 512, synthetic"},
      {"vgg16", "P100-SXM2", Precision::Fp32, 32, 144,
       std::string(kTf2017) + ": 'DGX-1 P100 - other results (batch 32)', VGG16, 32, synthetic"},
      // Volta: MXNet 1.2 performance FAQ, EC2 p3.2xlarge; MXNet's ResNet-50 puts the stride in the 3x3 (v1.5).
      {"resnet50-v1.5", "V100-SXM2", Precision::Fp32, 32, 298.51,
       std::string(kOther) + ": apache/mxnet@0c17f67e perf.md, Tesla V100-SXM2-16GB (EC2 p3.2xlarge), resnet50, 32"},
      // Volta fp16: NVIDIA DeepLearningExamples, MXNet ResNet-50 v1.5, DGX-1 V100 16 GB, mixed precision, 1 GPU.
      {"resnet50-v1.5", "V100-SXM2", Precision::Fp16, 192, 1376,
       std::string(kOther) + ": NVIDIA/DeepLearningExamples@729963dd MxNet/Classification/RN50v1.5/README.md "
                             "(DGX-1 8x V100 16GB), mixed (float16), 192, 1 GPU"},
  };
  return points;
}

const std::vector<MeasuredPoint>& validation_points()
{
  static const std::vector<MeasuredPoint> points = {
      {"resnet152", "K80", Precision::Fp32, 32, 20.0,
       std::string(kTf2017) + ": 'Google Compute Engine K80', ResNet-152, 32, synthetic"},
      {"resnet50", "K80", Precision::Fp32, 64, 51.9,
       std::string(kTf2017) + ": 'Google Compute Engine K80', ResNet-50, 64, synthetic"},
      {"resnet152", "P100-SXM2", Precision::Fp32, 32, 82.7,
       std::string(kTf2017) + ": 'DGX-1 P100 - other results (batch 32)', ResNet-152, 32, synthetic"},
      {"resnet50", "P100-SXM2", Precision::Fp32, 64, 219,
       std::string(kTf2017) + ": 'DGX-1 P100', ResNet-50, 64, synthetic"},
      {"googlenet", "P100-PCIe", Precision::Fp32, 128, 468,
       std::string(kOther) + ": Dell EMC HPC blog (Xu & Dandapanthu 2016), NV-Caffe, Tesla P100-PCIe-16GB, "
                             "googlenet, 128, 1 GPU, real data"},
      {"resnet50-v1.5", "V100-SXM2", Precision::Fp32, 64, 343.19,
       std::string(kOther) + ": apache/mxnet@0c17f67e perf.md, Tesla V100-SXM2-16GB (EC2 p3.2xlarge), resnet50, 64"},
  };
  return points;
}

const std::vector<EfficiencyProfile>& efficiency_profiles()
{
  // Fitted by least squares of the relative throughput error over the calibration points of each family, then
  // rounded to 3 decimals (workloads/README.md lists points and residuals; a unit test recomputes them). FC layers
  // are a few percent of the FLOPs of the calibration networks, so their efficiency is not separately
  // identifiable: it is set equal to the k x k convolutions'. Batch normalisation is memory-bound: its compute
  // term uses the full peak and never dominates.
  static const std::vector<EfficiencyProfile> profiles = {
      {"Kepler",
       {"K80"},
       Precision::Fp32,
       {0.179, 0.747, 0.747, 1.0},
       "fitted to the three K80 calibration points (TensorFlow 2017: ResNet-50, AlexNet, VGG-16)"},
      {"Pascal",
       {"P100-SXM2", "P100-PCIe", "P40"},
       Precision::Fp32,
       {0.297, 1.328, 1.328, 1.0},
       "fitted to the three P100-SXM2 calibration points (TensorFlow 2017: ResNet-50, AlexNet, VGG-16); the P40 "
       "and P100-PCIe (same Pascal generation, no usable measurement) take these efficiencies with their own "
       "datasheet peak and memory bandwidth"},
      {"Volta",
       {"V100-SXM2", "V100-PCIe"},
       Precision::Fp32,
       {0.355, 1.587, 1.587, 1.0},
       "Pascal's ratio conv1x1/conv kept, one scale fitted to the V100-SXM2 calibration point (MXNet 1.2, "
       "ResNet-50 v1.5, batch 32); V100-PCIe takes the same efficiencies with its own datasheet figures"},
      {"Volta",
       {"V100-SXM2", "V100-PCIe"},
       Precision::Fp16,
       {0.287, 1.282, 1.282, 1.0},
       "fp16 (tensor-core peak): Pascal's fp32 ratio conv1x1/conv kept, one scale fitted to the V100-SXM2 "
       "mixed-precision calibration point (NVIDIA DeepLearningExamples MXNet, ResNet-50 v1.5, batch 192)"},
  };
  return profiles;
}

const EfficiencyProfile& profile_for(const platform::GpuSpec& gpu, Precision precision)
{
  if (precision == Precision::Fp16 && !(gpu.peak_fp16_flops > 0))
    throw ConfigError(field("precision") + " fp16: GPU " + gpu.name +
                      " has no fp16 peak in the GPU catalogue (peak_fp16_flops is 0); use fp32");
  std::string calibrated;
  for (const auto& p : efficiency_profiles()) {
    if (p.precision != precision)
      continue;
    for (const auto& name : p.gpus) {
      if (name == gpu.name)
        return p;
      calibrated += (calibrated.empty() ? "" : ", ") + name;
    }
  }
  throw ConfigError("no calibrated " + std::string(precision_name(precision)) + " efficiencies for GPU " + gpu.name +
                    " (calibrated: " + calibrated + ")");
}

RooflineDevice roofline_device(const platform::GpuSpec& gpu, Precision precision)
{
  const auto& profile = profile_for(gpu, precision);
  RooflineDevice d;
  d.peak_flops = precision == Precision::Fp16 ? gpu.peak_fp16_flops : gpu.peak_fp32_flops;
  d.memory_bytes_per_s = gpu.memory_bytes_per_s;
  d.bytes_per_value = precision == Precision::Fp16 ? 2 : 4;
  d.efficiencies = profile.efficiencies;
  return d;
}

namespace {

double efficiency(const LayerSpec& layer, const Efficiencies& e)
{
  switch (layer.kind) {
  case LayerKind::Conv:
    return layer.kernel == 1 ? e.conv1x1 : e.conv;
  case LayerKind::FullyConnected:
    return e.fc;
  case LayerKind::BatchNorm:
    return e.batchnorm;
  }
  return 0;
}

} // namespace

LayerTime layer_time(const LayerSpec& layer, unsigned batch, const RooflineDevice& device)
{
  const double b = batch;
  const double s = device.bytes_per_value;
  const double flops_per_s = device.peak_flops * efficiency(layer, device.efficiencies);
  double forward_bytes = 0;
  double backward_bytes = 0;
  if (layer.kind == LayerKind::BatchNorm) {
    forward_bytes = kBatchNormForwardPasses * s * b * layer.output_elements_per_sample;
    backward_bytes = kBatchNormBackwardPasses * s * b * layer.output_elements_per_sample;
  } else {
    const double in = layer.input_elements_per_sample;
    const double out = layer.output_elements_per_sample;
    const double weights = double(layer.parameters);
    forward_bytes = s * (b * (in + out) + weights);
    backward_bytes = s * (b * (in + out + (layer.needs_input_gradient ? in : 0)) + 2 * weights);
  }
  LayerTime t;
  t.forward_s = std::max(b * layer.forward_flops_per_sample / flops_per_s, forward_bytes / device.memory_bytes_per_s);
  t.backward_s =
      std::max(b * layer.backward_flops_per_sample / flops_per_s, backward_bytes / device.memory_bytes_per_s);
  return t;
}

double update_time(std::uint64_t parameters, const RooflineDevice& device)
{
  return kUpdateBytesPerParameter * double(parameters) / device.memory_bytes_per_s;
}

double predicted_samples_per_s(const MeasuredPoint& point)
{
  GenerateRequest request;
  request.model = point.model;
  request.gpu = point.gpu;
  request.batch = point.batch;
  request.precision = point.precision;
  const auto w = generate_workload(request);
  double iteration_s = w.update_s();
  for (const auto& l : w.layers())
    iteration_s += l.forward_s() + l.backward_s();
  return point.batch / iteration_s;
}

namespace {

std::string fmt(const char* format, double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void check_positive(double value, const std::string& what)
{
  if (!std::isfinite(value) || !(value > 0))
    throw ConfigError(what + " must be a finite number > 0 (got " + format_double(value) + ")");
}

} // namespace

proto::Workload generate_workload(const GenerateRequest& request)
{
  const Model model = model_by_name(request.model);
  const auto& gpu = platform::gpu_by_name(request.gpu);
  if (request.batch < 1)
    throw ConfigError(field("batch") + " must be >= 1 (got " + std::to_string(request.batch) + ")");
  check_positive(request.h2d_bytes_per_s, "host-to-device bandwidth");
  check_positive(request.sample_bytes, "sample bytes");
  if (!std::isfinite(request.decode_samples_per_s) || request.decode_samples_per_s < 0)
    throw ConfigError("decode throughput must be >= 0 samples/s (got " + format_double(request.decode_samples_per_s) +
                      ")");
  const RooflineDevice device = roofline_device(gpu, request.precision);
  const auto& profile = profile_for(gpu, request.precision);

  proto::Workload w;
  w.set_schema_version(kSchemaVersion);
  w.set_model(model.name);
  w.set_batch_size_per_gpu(request.batch);
  w.set_reference_gpu(gpu.name);
  w.set_io_s(request.decode_samples_per_s > 0 ? request.batch / request.decode_samples_per_s : 0.0);
  w.set_h2d_s(request.batch * request.sample_bytes / request.h2d_bytes_per_s);
  w.set_update_s(update_time(total_parameters(model), device));
  for (const auto& l : model.layers) {
    const LayerTime t = layer_time(l, request.batch, device);
    auto* out = w.add_layers();
    out->set_name(l.name);
    out->set_forward_s(t.forward_s);
    out->set_backward_s(t.backward_s);
    out->set_gradient_bytes(static_cast<std::int64_t>(l.gradient_bytes(device.bytes_per_value)));
  }
  const auto& e = device.efficiencies;
  w.set_source(
      "ddlsim workload --model " + model.name + " --gpu " + gpu.name + " --batch " + std::to_string(request.batch) +
      " --precision " + precision_name(request.precision) + ". " + model.description +
      ". Per-layer roofline (workloads/README.md): max(FLOPs / (peak x efficiency), bytes / bandwidth), forward and "
      "backward separately; peak " +
      fmt("%.4g", device.peak_flops / 1e12) + " TFLOP/s, memory " + fmt("%.4g", device.memory_bytes_per_s / 1e9) +
      " GB/s (" + gpu.source + "); " + profile.family + " efficiencies conv1x1 " + fmt("%.3f", e.conv1x1) + ", conv " +
      fmt("%.3f", e.conv) + ", fc " + fmt("%.3f", e.fc) + " (" + profile.derivation +
      "). Update: 12 bytes per parameter at memory bandwidth. H2D: " + fmt("%.0f", request.sample_bytes) +
      " bytes per sample at " + fmt("%.5g", request.h2d_bytes_per_s / 1e9) + " GB/s. I/O: " +
      (request.decode_samples_per_s > 0 ? fmt("%.6g", request.decode_samples_per_s) + " samples/s input pipeline."
                                        : std::string("0 (input pipeline assumed to keep up).")));
  validate_workload(w, "generated workload");
  return w;
}

} // namespace ddlsim::workload
