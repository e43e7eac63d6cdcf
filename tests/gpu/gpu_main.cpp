// GPU test main: with no CUDA device every test is skipped with a message that says so.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>

namespace {

class NeedsGpu : public ::testing::Environment {
 public:
  void SetUp() override {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      std::printf("GPU tests skipped: no CUDA device (cudaGetDeviceCount: %s, %d devices)\n", cudaGetErrorString(e), n);
      GTEST_SKIP() << "no CUDA device";
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new NeedsGpu);
  return RUN_ALL_TESTS();
}
