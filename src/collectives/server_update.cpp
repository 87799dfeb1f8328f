// The work of a parameter server's sum and update: optimizer costs and the roofline bound.
#include "collectives/server_update.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ddlsim::collectives {
namespace {

// Per FP32 parameter w with gradient g. Reads and writes count 4 bytes each.
const std::vector<OptimizerCost> kOptimizers = {
    {Optimizer::Sgd, "sgd", 2, 12, "w -= lr g: 1 mul + 1 add; read w, g, write w (PyTorch torch/optim/sgd.py, v1.0)"},
    {Optimizer::Momentum, "momentum", 4, 20,
     "v = m v + g; w -= lr v: 2 mul + 2 add; read w, g, v, write w, v (PyTorch torch/optim/sgd.py, v1.0; "
     "TensorFlow ApplyMomentum, tensorflow/core/kernels/training_ops.cc, r1.4)"},
    {Optimizer::Adam, "adam", 12, 28,
     "m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; w -= lr m / (sqrt(v) + eps): 3 + 4 + 5 FLOP (sqrt and divide "
     "counted as one each); read w, g, m, v, write w, m, v (Kingma and Ba 2015, Algorithm 1)"},
};

} // namespace

const OptimizerCost& optimizer_cost(Optimizer id)
{
  for (const auto& o : kOptimizers)
    if (o.id == id)
      return o;
  throw Error("internal: optimizer without a table row");
}

const OptimizerCost* find_optimizer(const char* name)
{
  for (const auto& o : kOptimizers)
    if (std::strcmp(o.name, name) == 0)
      return &o;
  return nullptr;
}

const char* known_optimizers()
{
  return "sgd, momentum, adam";
}

double server_update_s(const ServerRate& rate, int pushes, std::uint64_t bytes, Optimizer optimizer)
{
  if (bytes == 0)
    return 0.0;
  const OptimizerCost& c = optimizer_cost(optimizer);
  const double params = double(bytes) / 4;
  const double flop = (double(pushes - 1) + c.flop_per_param) * params;
  const double traffic = double(pushes + 1) * double(bytes) + c.bytes_per_param * params;
  return std::max(flop / rate.flops, traffic / rate.memory_bytes_per_s);
}

} // namespace ddlsim::collectives
