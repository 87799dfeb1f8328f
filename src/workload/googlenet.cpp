// GoogLeNet (Inception v1, Szegedy et al., CVPR 2015) as in BVLC Caffe's models/bvlc_googlenet/train_val.prototxt.
#include "workload/layer_builder.hpp"

namespace ddlsim::workload {
namespace {

/** Channel widths of one inception module: 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection. */
struct Inception {
  const char* name;
  int c1, c3r, c3, c5r, c5, pp;
  int out() const { return c1 + c3 + c5 + pp; }
};

void inception(detail::LayerBuilder& b, const Inception& m, int in, int hw)
{
  const std::string p = std::string("inception_") + m.name + "/";
  b.conv(p + "1x1", 1, 1, in, m.c1, hw, hw, true);
  b.conv(p + "3x3_reduce", 1, 1, in, m.c3r, hw, hw, true);
  b.conv(p + "3x3", 3, 1, m.c3r, m.c3, hw, hw, true);
  b.conv(p + "5x5_reduce", 1, 1, in, m.c5r, hw, hw, true);
  b.conv(p + "5x5", 5, 1, m.c5r, m.c5, hw, hw, true);
  b.conv(p + "pool_proj", 1, 1, in, m.pp, hw, hw, true); // after a 3x3/1 max pool (padding 1)
}

/** Auxiliary classifier: 5x5/3 average pool, 1x1 convolution to 128 channels, FC 1024, FC 1000. */
void auxiliary(detail::LayerBuilder& b, const std::string& loss, int in, int hw)
{
  const int pooled = detail::pool_out(hw, 5, 3, 0, true); // 14 -> 4
  b.conv(loss + "/conv", 1, 1, in, 128, pooled, pooled, true);
  b.fc(loss + "/fc", 128 * pooled * pooled, 1024);
  b.fc(loss + "/classifier", 1024, 1000);
}

} // namespace

Model googlenet(bool aux)
{
  using detail::conv_out;
  using detail::pool_out;
  detail::LayerBuilder b;
  // Caffe pools round up (ceil mode); every convolution has a bias. LRN, ReLU, pooling, concatenation and
  // dropout have no parameters and are not listed.
  const int c1 = conv_out(224, 7, 2, 3); // 112
  b.conv("conv1/7x7_s2", 7, 2, 3, 64, 224, c1, true, /*first=*/true);
  const int p1 = pool_out(c1, 3, 2, 0, true); // 56
  b.conv("conv2/3x3_reduce", 1, 1, 64, 64, p1, p1, true);
  b.conv("conv2/3x3", 3, 1, 64, 192, p1, p1, true);
  const int p2 = pool_out(p1, 3, 2, 0, true); // 28
  const Inception i3a{"3a", 64, 96, 128, 16, 32, 32}, i3b{"3b", 128, 128, 192, 32, 96, 64};
  inception(b, i3a, 192, p2);
  inception(b, i3b, i3a.out(), p2);
  const int p3 = pool_out(p2, 3, 2, 0, true); // 14
  const Inception i4a{"4a", 192, 96, 208, 16, 48, 64}, i4b{"4b", 160, 112, 224, 24, 64, 64},
      i4c{"4c", 128, 128, 256, 24, 64, 64}, i4d{"4d", 112, 144, 288, 32, 64, 64},
      i4e{"4e", 256, 160, 320, 32, 128, 128};
  inception(b, i4a, i3b.out(), p3);
  if (aux)
    auxiliary(b, "loss1", i4a.out(), p3);
  inception(b, i4b, i4a.out(), p3);
  inception(b, i4c, i4b.out(), p3);
  inception(b, i4d, i4c.out(), p3);
  if (aux)
    auxiliary(b, "loss2", i4d.out(), p3);
  inception(b, i4e, i4d.out(), p3);
  const int p4 = pool_out(p3, 3, 2, 0, true); // 7
  const Inception i5a{"5a", 256, 160, 320, 32, 128, 128}, i5b{"5b", 384, 192, 384, 48, 128, 128};
  inception(b, i5a, i4e.out(), p4);
  inception(b, i5b, i5a.out(), p4);
  b.fc("loss3/classifier", i5b.out(), 1000); // after a 7x7 average pool and dropout
  return {aux ? "googlenet-aux" : "googlenet",
          std::string("GoogLeNet / Inception v1 (Szegedy et al. 2015, BVLC Caffe train_val.prototxt), ") +
              (aux ? "with the two auxiliary classifiers" : "without the auxiliary classifiers") + ", 224x224 input",
          b.take()};
}

} // namespace ddlsim::workload
