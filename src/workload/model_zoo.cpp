// Model zoo lookup by name and totals over layers.
#include "workload/model_zoo.hpp"

#include "common/error.hpp"

#include <algorithm>

namespace ddlsim::workload {

Model model_by_name(const std::string& name)
{
  if (name == "alexnet")
    return alexnet(false);
  if (name == "alexnet-owt")
    return alexnet(true);
  if (name == "googlenet")
    return googlenet(false);
  if (name == "googlenet-aux")
    return googlenet(true);
  if (name == "vgg16")
    return vgg16();
  if (name == "resnet50")
    return resnet(50, false);
  if (name == "resnet50-v1.5")
    return resnet(50, true);
  if (name == "resnet152")
    return resnet(152, false);
  if (name == "resnet152-v1.5")
    return resnet(152, true);
  throw ConfigError("unknown model '" + name + "' (known: " + known_models() + ")");
}

std::string known_models()
{
  return "alexnet, alexnet-owt, googlenet, googlenet-aux, vgg16, resnet50, resnet50-v1.5, resnet152, resnet152-v1.5";
}

std::uint64_t total_parameters(const Model& model)
{
  std::uint64_t sum = 0;
  for (const auto& l : model.layers)
    sum += l.parameters;
  return sum;
}

double total_forward_flops(const Model& model, const std::vector<LayerKind>& kinds)
{
  double sum = 0;
  for (const auto& l : model.layers)
    if (kinds.empty() || std::find(kinds.begin(), kinds.end(), l.kind) != kinds.end())
      sum += l.forward_flops_per_sample;
  return sum;
}

} // namespace ddlsim::workload
