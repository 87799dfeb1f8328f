// VGG-16 (Simonyan & Zisserman, ICLR 2015, configuration D), 224 x 224 input.
#include "workload/layer_builder.hpp"

namespace ddlsim::workload {

Model vgg16()
{
  detail::LayerBuilder b;
  // Five blocks of 3x3 convolutions (padding 1, bias), each followed by a 2x2/2 max pool.
  const int widths[5] = {64, 128, 256, 512, 512};
  const int convs[5] = {2, 2, 3, 3, 3};
  int hw = 224;
  int cin = 3;
  for (int block = 0; block < 5; ++block) {
    for (int i = 0; i < convs[block]; ++i) {
      const std::string name = "conv" + std::to_string(block + 1) + "_" + std::to_string(i + 1);
      b.conv(name, 3, 1, cin, widths[block], hw, hw, true, /*first=*/block == 0 && i == 0);
      cin = widths[block];
    }
    hw /= 2;
  }
  b.fc("fc6", 512 * hw * hw, 4096);
  b.fc("fc7", 4096, 4096);
  b.fc("fc8", 4096, 1000);
  return {"vgg16", "VGG-16 (Simonyan & Zisserman 2015, configuration D), 224x224 input", b.take()};
}

} // namespace ddlsim::workload
