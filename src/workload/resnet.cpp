// ResNet-50 and ResNet-152 (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016, Table 1).
#include "common/error.hpp"
#include "workload/layer_builder.hpp"

namespace ddlsim::workload {

Model resnet(int depth, bool v1_5)
{
  int blocks[4];
  if (depth == 50) {
    const int b50[4] = {3, 4, 6, 3};
    std::copy(b50, b50 + 4, blocks);
  } else if (depth == 152) {
    const int b152[4] = {3, 8, 36, 3};
    std::copy(b152, b152 + 4, blocks);
  } else {
    throw ConfigError("ResNet depth must be 50 or 152 (got " + std::to_string(depth) + ")");
  }
  detail::LayerBuilder b;
  // Layer names follow the authors' Caffe models (conv1, bn_conv1, res2a_branch2a, bn2a_branch2a, ...).
  // Convolutions have no bias; each is followed by a batch normalisation with scale and shift.
  b.conv("conv1", 7, 2, 3, 64, 224, 112, false, /*first=*/true);
  b.bn("bn_conv1", 64, 112);
  // 3x3/2 max pool: 112 -> 56. Stages: index, bottleneck width, output width, output side.
  const int mid[4] = {64, 128, 256, 512};
  const int out[4] = {256, 512, 1024, 2048};
  const int hw[4] = {56, 28, 14, 7};
  int in = 64;
  int in_hw = 56;
  for (int s = 0; s < 4; ++s) {
    for (int blk = 0; blk < blocks[s]; ++blk) {
      // Block names: a, b, c, ... for ResNet-50; a, b1, b2, ... for the deeper Caffe models.
      std::string id = std::to_string(s + 2);
      if (blocks[s] <= 6 || blk == 0)
        id += char('a' + blk);
      else
        id += "b" + std::to_string(blk);
      const bool down = blk == 0;
      const int stride = (down && s > 0) ? 2 : 1;
      const int block_in = down ? in : out[s];
      const int block_in_hw = down ? in_hw : hw[s];
      if (down) { // projection shortcut
        b.conv("res" + id + "_branch1", 1, stride, in, out[s], in_hw, hw[s], false);
        b.bn("bn" + id + "_branch1", out[s], hw[s]);
      }
      // v1: the stride sits in branch2a (1x1); v1.5: in branch2b (3x3).
      const int a_stride = v1_5 ? 1 : stride;
      const int a_hw = v1_5 ? block_in_hw : hw[s];
      b.conv("res" + id + "_branch2a", 1, a_stride, block_in, mid[s], block_in_hw, a_hw, false);
      b.bn("bn" + id + "_branch2a", mid[s], a_hw);
      b.conv("res" + id + "_branch2b", 3, v1_5 ? stride : 1, mid[s], mid[s], a_hw, hw[s], false);
      b.bn("bn" + id + "_branch2b", mid[s], hw[s]);
      b.conv("res" + id + "_branch2c", 1, 1, mid[s], out[s], hw[s], hw[s], false);
      b.bn("bn" + id + "_branch2c", out[s], hw[s]);
    }
    in = out[s];
    in_hw = hw[s];
  }
  b.fc("fc1000", 2048, 1000);
  const std::string name = "resnet" + std::to_string(depth) + (v1_5 ? "-v1.5" : "");
  return {name,
          "ResNet-" + std::to_string(depth) +
              (v1_5 ? " v1.5 (torchvision: stride in the 3x3 convolution)"
                    : " v1 (He et al. 2016, Caffe models: stride in the first 1x1)") +
              ", 224x224 input",
          b.take()};
}

} // namespace ddlsim::workload
