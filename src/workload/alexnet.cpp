// AlexNet, single tower (Krizhevsky, "One weird trick for parallelizing CNNs", 2014), torchvision layout.
#include "workload/layer_builder.hpp"

namespace ddlsim::workload {

Model alexnet(bool owt)
{
  using detail::conv_out;
  using detail::pool_out;
  detail::LayerBuilder b;
  // torchvision.models.alexnet: 224 x 224 input, every convolution and FC layer has a bias.
  const int c1 = conv_out(224, 11, 4, 2); // 55
  b.conv("conv1", 11, 4, 3, 64, 224, c1, true, /*first=*/true);
  const int p1 = pool_out(c1, 3, 2, 0, false); // 27
  b.conv("conv2", 5, 1, 64, 192, p1, p1, true);
  const int p2 = pool_out(p1, 3, 2, 0, false); // 13
  b.conv("conv3", 3, 1, 192, 384, p2, p2, true);
  const int c4 = owt ? 384 : 256; // Krizhevsky 2014 single column: 384; torchvision: 256
  b.conv("conv4", 3, 1, 384, c4, p2, p2, true);
  b.conv("conv5", 3, 1, c4, 256, p2, p2, true);
  const int p5 = pool_out(p2, 3, 2, 0, false); // 6
  b.fc("fc6", 256 * p5 * p5, 4096);
  b.fc("fc7", 4096, 4096);
  b.fc("fc8", 4096, 1000);
  if (owt)
    return {"alexnet-owt",
            "AlexNet single column as in Krizhevsky 2014 and tf_cnn_benchmarks (64-192-384-384-256 convolutions, "
            "4096-4096-1000 FC), 224x224 input",
            b.take()};
  return {"alexnet",
          "AlexNet single tower (Krizhevsky 2014, torchvision layout: 64-192-384-256-256 convolutions, "
          "4096-4096-1000 FC), 224x224 input",
          b.take()};
}

} // namespace ddlsim::workload
