// The development switches' parsing (core/env.h): a malformed value must not crash or register surprises.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/env.h"
#include "registry/registry.h"
#include "tgemm/kernel.h"

namespace tgemm {
namespace {

TEST(Env, IntListTakesCommasAndColons) {
  ::setenv("TGEMM_TEST_LIST", "0,2:6", 1);
  EXPECT_EQ(env_int_list("TGEMM_TEST_LIST"), (std::vector<int>{0, 2, 6}));
  ::setenv("TGEMM_TEST_LIST", "7", 1);
  EXPECT_EQ(env_int_list("TGEMM_TEST_LIST"), (std::vector<int>{7}));
  ::setenv("TGEMM_TEST_LIST", "3,x,5", 1);  // stops at what is not a number
  EXPECT_EQ(env_int_list("TGEMM_TEST_LIST"), (std::vector<int>{3}));
  ::setenv("TGEMM_TEST_LIST", "", 1);
  EXPECT_TRUE(env_int_list("TGEMM_TEST_LIST").empty());
  ::unsetenv("TGEMM_TEST_LIST");
  EXPECT_TRUE(env_int_list("TGEMM_TEST_LIST").empty());
}

// The L2-hint twins exist only on request (TGEMM_SM90_L2_TWINS, unset in the tests): no registered kernel carries
// their suffix, so a tuned table can never name one. (The sanitizer builds leave the CUDA backends out, so the
// registry may hold no sm90 kernel at all.)
TEST(Env, NoL2HintTwinsByDefault) {
  ASSERT_EQ(std::getenv("TGEMM_SM90_L2_TWINS"), nullptr);
  ASSERT_FALSE(Registry::get().all().empty());
  for (const Kernel* k : Registry::get().all()) EXPECT_EQ(k->name().find("_l2h"), std::string::npos) << k->name();
}

}  // namespace
}  // namespace tgemm
