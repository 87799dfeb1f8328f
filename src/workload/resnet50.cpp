// ResNet-50 v1 layer table (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016, Table 1).
#include "common/error.hpp"
#include "workload/model_zoo.hpp"

namespace ddlsim::workload {
namespace {

// FLOP counting conventions (documented in workloads/README.md):
//  - convolution and fully connected: 2 FLOPs per multiply-accumulate;
//  - batch normalisation (training mode, per output element): 4 FLOPs forward (subtract mean, multiply by
//    inverse deviation, scale, shift); an assumption, BN is memory-bound and its FLOPs are small anyway;
//  - backward = 2 x forward (input gradient + weight gradient), except the first convolution, whose input
//    is the image and needs no gradient (1 x forward).
constexpr double kBnFlopsPerElement = 4.0;

class Builder {
public:
  void conv(const std::string& name, int k, int cin, int cout, int out_hw, bool first = false)
  {
    const double macs = double(k) * k * cin * cout * double(out_hw) * out_hw;
    const double fwd = 2.0 * macs;
    layers_.push_back({name, LayerKind::Conv, std::uint64_t(k) * k * cin * cout, fwd, first ? fwd : 2.0 * fwd});
  }
  void bn(const std::string& name, int channels, int out_hw)
  {
    const double fwd = kBnFlopsPerElement * channels * double(out_hw) * out_hw;
    layers_.push_back({name, LayerKind::BatchNorm, 2ULL * channels, fwd, 2.0 * fwd});
  }
  void fc(const std::string& name, int in, int out)
  {
    const double fwd = 2.0 * in * out;
    layers_.push_back({name, LayerKind::FullyConnected, std::uint64_t(in) * out + out, fwd, 2.0 * fwd});
  }
  std::vector<LayerSpec> take() { return std::move(layers_); }

private:
  std::vector<LayerSpec> layers_;
};

} // namespace

std::vector<LayerSpec> resnet50()
{
  Builder b;
  b.conv("conv1", 7, 3, 64, 112, /*first=*/true);
  b.bn("bn_conv1", 64, 112);
  // Stages res2..res5: blocks, bottleneck width, output width, output spatial size (after the 3x3/2 max pool).
  struct Stage {
    int index;
    int blocks;
    int mid;
    int out;
    int hw;
  };
  const Stage stages[] = {{2, 3, 64, 256, 56}, {3, 4, 128, 512, 28}, {4, 6, 256, 1024, 14}, {5, 3, 512, 2048, 7}};
  int in = 64;
  for (const auto& s : stages) {
    for (int blk = 0; blk < s.blocks; ++blk) {
      const std::string id = std::to_string(s.index) + char('a' + blk);
      if (blk == 0) { // projection shortcut (stride 2 from res3 on, in the shortcut and in branch2a: v1)
        b.conv("res" + id + "_branch1", 1, in, s.out, s.hw);
        b.bn("bn" + id + "_branch1", s.out, s.hw);
      }
      b.conv("res" + id + "_branch2a", 1, blk == 0 ? in : s.out, s.mid, s.hw);
      b.bn("bn" + id + "_branch2a", s.mid, s.hw);
      b.conv("res" + id + "_branch2b", 3, s.mid, s.mid, s.hw);
      b.bn("bn" + id + "_branch2b", s.mid, s.hw);
      b.conv("res" + id + "_branch2c", 1, s.mid, s.out, s.hw);
      b.bn("bn" + id + "_branch2c", s.out, s.hw);
    }
    in = s.out;
  }
  b.fc("fc1000", 2048, 1000);
  return b.take();
}

std::vector<LayerSpec> model_by_name(const std::string& name)
{
  if (name == "resnet50")
    return resnet50();
  throw ConfigError("unknown model '" + name + "' (known: " + known_models() + ")");
}

std::string known_models() { return "resnet50"; }

} // namespace ddlsim::workload
